// Where a server process's CPU goes, thread by thread, from /proc/<pid>/task/*/stat. The
// service names its threads (src/shared/os-thread.ts: mr-writer, mr-interactive, …); the
// main thread is the task whose id is the pid; the rest (V8's GC and compiler helpers,
// libuv) are summed as "other".
import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds used so far, by thread role. */
export type ThreadCpu = Record<string, number>;

export function threadCpu(pid: number): ThreadCpu {
  const out: ThreadCpu = {};
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const role = tid === String(pid) ? 'main' : name.startsWith('mr-') ? name.slice(3) : 'other';
      out[role] = (out[role] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** Cores used by each role while `work` ran (CPU seconds ÷ wall seconds). */
export async function withThreadCpu<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; cores: ThreadCpu }> {
  const before = threadCpu(pid);
  const t0 = performance.now();
  const value = await work();
  const seconds = (performance.now() - t0) / 1000;
  const after = threadCpu(pid);
  const cores: ThreadCpu = {};
  for (const role of Object.keys(after)) cores[role] = (after[role] - (before[role] ?? 0)) / seconds;
  return { value, cores };
}

export function formatCores(cores: ThreadCpu): string {
  return Object.entries(cores)
    .sort((a, b) => b[1] - a[1])
    .map(([role, c]) => `${role} ${c.toFixed(2)}`)
    .join(', ');
}
