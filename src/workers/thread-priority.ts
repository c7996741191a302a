// Worker-thread side: lowers the OS scheduling priority of the calling thread only. On Linux
// (NPTL) setpriority() and sched_setscheduler() given a thread id apply to that one thread.
// SCHED_IDLE is the strongest form: the thread runs only on CPU time no normal thread wants,
// and a waking normal thread preempts it at once. nice 19 alone still let the background
// thread take ~20% of a core from saturated recall threads (measured with bench:mixed).
// node:os can renice but not change the policy, hence util-linux's chrt where present.
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The lowest priority (nice 19): anything else on the machine goes first. */
export const BACKGROUND_NICE = 19;

export type Lowered = 'idle' | 'nice' | 'none';

/** How far the thread's priority was lowered: 'none' where threads cannot be (non-Linux); work still runs. */
export function lowerThreadPriority(): Lowered {
  let tid: number;
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>": the kernel's id of this thread.
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return 'none';
    setPriority(tid, BACKGROUND_NICE);
  } catch {
    return 'none';
  }
  try {
    execFileSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore', timeout: 5_000 });
    return 'idle';
  } catch {
    return 'nice';
  }
}
