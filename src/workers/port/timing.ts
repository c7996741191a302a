// Stage timing for the recall pipeline: each stage (a signal by its name, hydration, fusion)
// adds its wall time to a per-task record that the pool hands back to the main thread for
// the recall_stage_duration_seconds histogram. Repeated names accumulate.
import type { StageTimings } from '../../shared/protocol/pool.js';

export function timed<T>(timings: StageTimings, stage: string, work: () => T): T {
  const started = performance.now();
  try {
    return work();
  } finally {
    timings[stage] = (timings[stage] ?? 0) + (performance.now() - started);
  }
}

/** timed() for a stage that awaits its storage reads. */
export async function timedAsync<T>(timings: StageTimings, stage: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    timings[stage] = (timings[stage] ?? 0) + (performance.now() - started);
  }
}
