// OS-level identity and priority of the calling thread (Linux; a no-op elsewhere). On Linux
// (NPTL) each worker thread is a kernel task of its own: setpriority() and
// sched_setscheduler() given its id apply to that one thread, and its name shows in
// `top -H`, `ps -L` and /proc/<pid>/task/*/comm — how bench:mixed tells the writer's CPU
// from recall's.
// SCHED_IDLE is the strongest lowering: the thread runs only on CPU time no normal thread
// wants, and a waking normal thread preempts it at once. nice 19 alone still let the
// background thread take ~20% of a core from saturated recall threads (measured with
// bench:mixed). node:os can renice but not change the policy, hence util-linux's chrt.
import { execFileSync } from 'node:child_process';
import { readlinkSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The lowest priority (nice 19): anything else on the machine goes first. */
export const BACKGROUND_NICE = 19;
/** The highest nice value Linux accepts. */
const MAX_NICE = 19;

export type Lowered = 'idle' | 'nice' | 'none';

/** The kernel's id of the calling thread, or null where there is no /proc. */
function threadId(): number | null {
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>".
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/** Names the calling thread (the kernel keeps 15 bytes). Diagnostics only: failure is ignored. */
export function nameThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // No /proc (non-Linux): threads keep the process's name.
  }
}

/**
 * Lowers the calling thread's priority to `nice` and, with `idle`, to SCHED_IDLE. Returns how
 * far it got: 'none' where threads cannot be lowered (non-Linux); work still runs.
 */
export function lowerThreadPriority(nice = BACKGROUND_NICE, idle = true): Lowered {
  const tid = threadId();
  if (tid === null) return 'none';
  try {
    setPriority(tid, nice);
  } catch {
    return 'none';
  }
  if (!idle) return 'nice';
  try {
    execFileSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore', timeout: 5_000 });
    return 'idle';
  } catch {
    return 'nice';
  }
}

/** What `lowerThreadPriorityBy` did: the nice values before and after, or why it could not. */
export type PriorityChange = { lowered: true; from: number; to: number } | { lowered: false; reason: string };

/**
 * Lowers the calling thread `step` nice levels below where it runs now (at most to 19), so a
 * service started under `nice` keeps the same order between its threads instead of an
 * absolute value that could sit above the rest of the process. Failure is returned, not
 * thrown: the thread still works, only unordered — the caller reports it once.
 */
export function lowerThreadPriorityBy(step: number): PriorityChange {
  const tid = threadId();
  if (tid === null) return { lowered: false, reason: 'no /proc/thread-self (threads cannot be reniced on this platform)' };
  try {
    // 0 = the calling thread: on Linux getpriority/setpriority take a thread id.
    const from = getPriority(0);
    const to = Math.min(MAX_NICE, from + step);
    if (to <= from) return { lowered: false, reason: `the process already runs at the lowest priority (nice ${from})` };
    setPriority(tid, to);
    return { lowered: true, from, to };
  } catch (error) {
    return { lowered: false, reason: (error as Error).message };
  }
}
