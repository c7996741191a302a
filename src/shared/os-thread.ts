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
import { setPriority } from 'node:os';

/** The lowest priority (nice 19): anything else on the machine goes first. */
export const BACKGROUND_NICE = 19;

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
