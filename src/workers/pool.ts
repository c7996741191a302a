// Main-thread side of the read/CPU pool. Workers are long-lived (minThreads = maxThreads):
// each opens its read-only connection and prepares its statements once.
import { Piscina } from 'piscina';
import type { Config } from '../shared/config.js';
import { ServiceError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { PoolOp, PoolResults, PoolWorkerData, StageTimings, TaskOf, TaskResult } from '../shared/messages.js';

/**
 * Piscina loads the worker file with require() first and falls back to import(). On Node
 * 20.19+ require() of an ES module is on by default, and racing with the worker's own
 * dynamic imports it can hit an internal assertion that aborts the whole process
 * (nodejs/node#62432). With require(esm) off in pool threads, require() fails cleanly with
 * ERR_REQUIRE_ESM and Piscina goes straight to import().
 */
const REQUIRE_ESM_OFF = process.allowedNodeEnvironmentFlags.has('--experimental-require-module')
  ? ['--no-experimental-require-module']
  : [];

export class ReadPool {
  private readonly piscina: Piscina;
  /** Receives the stage timings a task reported (metrics hook); they never reach a caller. */
  onStageTimings: ((op: PoolOp, timings: StageTimings) => void) | null = null;

  constructor(config: Config, namespaceId: number, log: Logger) {
    const workerData: PoolWorkerData = { config, namespaceId };
    this.piscina = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      minThreads: config.poolThreads,
      maxThreads: config.poolThreads,
      idleTimeout: Number.POSITIVE_INFINITY,
      // A task may mostly wait on I/O (`end` waits on the extraction endpoint for up to
      // SERVICE_EXTRACTOR_TIMEOUT_MS): meanwhile its thread takes other tasks instead of idling.
      concurrentTasksPerWorker: 4,
      workerData,
      execArgv: [...process.execArgv, ...REQUIRE_ESM_OFF],
    });
    // A worker that dies is replaced by Piscina; its task fails. Without a listener the
    // 'error' event would take the whole process down.
    this.piscina.on('error', (error: unknown) => log.error({ err: error }, 'pool worker failed'));
  }

  /** Fraction of pool capacity in use, 0..1. */
  get utilization(): number {
    return this.piscina.utilization;
  }

  get queueSize(): number {
    return this.piscina.queueSize;
  }

  async run<T extends PoolOp>(task: TaskOf<T>): Promise<PoolResults[T]> {
    const result = (await this.piscina.run(task)) as TaskResult<PoolResults[T]>;
    if (!result.ok) throw ServiceError.fromWire(result.error);
    if (result.timings) this.onStageTimings?.(task.op, result.timings);
    return result.value;
  }

  close(): Promise<void> {
    return this.piscina.destroy();
  }
}
