// Lanes of worker threads over one worker file: interactive tasks (short reads a client waits
// for), requested tasks (heavier work a client waits for: extraction, deletion snapshots,
// consolidation) and background tasks (upkeep nobody waits on). Measured with bench:mixed: in one shared
// pool a recall queued behind a 64-text embedding batch (~0.5 s) or an IVF training run (~100 s
// at 1M), and recall p99 went from 66 ms idle to 1.06 s while writes streamed in. Separate
// lanes mean an interactive task never waits in a queue behind background work, and the
// background threads run at the lowest OS priority, so when both lanes want the CPU the
// kernel gives it to the interactive ones (see shared/os-thread.ts). Requested work keeps the
// normal priority: at the idle one a DELETE or an episode end took seconds under recall load
// and waited out whole IVF training runs. Main-thread side.
import { Piscina } from 'piscina';
import type { Lane } from '../../shared/protocol/pool.js';

export type { Lane };

export interface LaneOptions {
  threads: number;
  /**
   * Tasks a thread takes at once. 1 for CPU-bound work: a queued task then goes to the first
   * thread that frees up instead of waiting behind a busy one. More where tasks mostly wait
   * on I/O (an embedding or extraction endpoint).
   */
  concurrentTasksPerWorker: number;
}

export interface LanePoolOptions {
  /** URL of the worker file; it gets `{...workerData, lane}` and lowers its own priority in the background lane. */
  filename: string;
  workerData: object;
  execArgv?: string[];
  lanes: Record<Lane, LaneOptions>;
  /**
   * How an idle thread waits for its next task (Piscina's `atomics`): 'sync' (the default) blocks
   * the thread, event loop included, in Atomics.wait — the cheapest hand-off; 'disabled' lets
   * the event loop run between tasks, for threads holding network connections.
   */
  atomics?: 'sync' | 'disabled';
  onError(error: unknown): void;
}

export class LanePool {
  private readonly lanes: Record<Lane, Piscina>;

  constructor(options: LanePoolOptions) {
    const start = (lane: Lane) => {
      const { threads, concurrentTasksPerWorker } = options.lanes[lane];
      const piscina = new Piscina({
        filename: options.filename,
        // Long-lived threads: each opens its connection and loads its model once.
        minThreads: threads,
        maxThreads: threads,
        idleTimeout: Number.POSITIVE_INFINITY,
        concurrentTasksPerWorker,
        workerData: { ...options.workerData, lane },
        execArgv: options.execArgv,
        atomics: options.atomics ?? 'sync',
      });
      // A worker that dies is replaced by Piscina; its task fails. Without a listener the
      // 'error' event would take the whole process down.
      piscina.on('error', options.onError);
      return piscina;
    };
    this.lanes = { interactive: start('interactive'), requested: start('requested'), background: start('background') };
  }

  run(lane: Lane, task: unknown): Promise<unknown> {
    return this.lanes[lane].run(task);
  }

  /** Fraction of the interactive lane's capacity in use, 0..1 (what clients feel). */
  utilization(lane: Lane): number {
    return this.lanes[lane].utilization;
  }

  /** Threads running now, in every lane. */
  get threadCount(): number {
    return Object.values(this.lanes).reduce((sum, lane) => sum + lane.threads.length, 0);
  }

  queueSize(lane: Lane): number {
    return this.lanes[lane].queueSize;
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.lanes).map((lane) => lane.destroy()));
  }
}
