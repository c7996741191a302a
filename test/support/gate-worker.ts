// A Piscina worker for the lane tests: each task writes its id into a shared start log, then
// ("hold") blocks its thread until the test opens the gate — like a synchronous embedding
// batch or an IVF training run — or ("mark") returns at once, like a short recall.
import { lowerThreadPriority } from '../../src/shared/os-thread.js';
import { workerData } from 'node:worker_threads';

export interface GateTask {
  kind: 'hold' | 'mark';
  id: number;
  /** [0] = entries so far, then the ids in the order tasks started. */
  log: Int32Array;
  /** [0] = 0 closed, 1 open. */
  gate: Int32Array;
}

// As the service's worker does: background threads lower their own priority.
// (The test runner also loads this file as a test on the main thread, where workerData is null.)
if ((workerData as { lane?: string } | null)?.lane === 'background') lowerThreadPriority();

export default function run(task: GateTask): number {
  const slot = Atomics.add(task.log, 0, 1) + 1;
  Atomics.store(task.log, slot, task.id);
  Atomics.notify(task.log, 0);
  if (task.kind === 'hold') Atomics.wait(task.gate, 0, 0);
  return task.id;
}
