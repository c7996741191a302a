// Main-thread side of the read/CPU pool: every task goes to its lane (POOL_TASKS), interactive,
// requested or background (lane-pool.ts). Workers are long-lived: each opens its read-only connection
// and prepares its statements once.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../shared/config.js';
import { ServiceError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { POOL_TASKS, type PoolOp, type PoolReply, type PoolResults, type PoolWorkerData, type ReadSide, type StageTimings, type TaskOf } from '../../shared/protocol/pool.js';
import { askThreadsToClose } from '../../shared/pool-close.js';
import { isNullSocketWrite } from '../../shared/postgres-client-guard.js';
import { LanePool, type Lane } from './lane-pool.js';
import { VectorCodesRegistry } from './vector-codes-registry.js';

/** The tasks that may run outside their declared lane (ReadPool.run's `lane`). */
type FloorOp = 'embedPending' | 'pendingNamespaces';

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
  private readonly lanes: LanePool;
  /**
   * PostgreSQL: where the threads are asked to end their sessions before they are terminated
   * (shared/pool-close.ts); unique per pool, as several services may run in one process (tests).
   * SQLite: null (a read-only file handle has no one to say goodbye to).
   */
  private readonly closeChannel: string | null;
  /** Interactive tasks started and not yet settled (Piscina's utilization is a long-run average). */
  /** Receives the stage timings a task reported (metrics hook); they never reach a caller. */
  onStageTimings: ((op: PoolOp, timings: StageTimings) => void) | null = null;
  /** Receives which side served a recall's snapshot on PostgreSQL with replicas (metrics hook). */
  onReadSide: ((side: ReadSide) => void) | null = null;
  /** Receives why a replica failed (a pool thread reports it at most once a minute); the primary served. */
  onReplicaFailure: ((cause: string) => void) | null = null;
  /** Called when a replica cancelled a recall's snapshot on a recovery conflict and the primary ran it (metrics hook). */
  onRecoveryConflict: (() => void) | null = null;
  /** A pool thread ended on the postgres client's null-socket write and its read ran again (logged). */
  onThreadLost: ((error: Error) => void) | null = null;
  /** A recall was served by a replica alone because the primary did not answer (PostgreSQL failover). */
  onPrimaryFailure: ((cause: string) => void) | null = null;

  private readonly interactiveThreads: number;
  /** The one copy of each namespace's vector codes every recall of it is handed (SQLite; off at SERVICE_VECTOR_CODES_MB=0). */
  readonly vectorCodes: VectorCodesRegistry;

  private readonly serviceNamespace: string;

  constructor(config: Config, log: Logger) {
    this.serviceNamespace = config.namespace;
    this.interactiveThreads = config.poolThreads;
    this.closeChannel = config.postgres ? `memory-runtime-pool-close-${randomUUID()}` : null;
    this.vectorCodes = new VectorCodesRegistry(
      (namespace, previous, limitBytes) => this.run({ op: 'refreshVectorCodes', namespace, previous, limitBytes }),
      config.postgres ? 0 : config.vectorCodesBytes, log);
    const workerData: PoolWorkerData = { config, closeChannel: this.closeChannel };
    // A recall embeds its query locally (CPU) unless the embedder is an endpoint (a wait).
    const recallWaitsOnIo = config.embedder.kind === 'openai';
    this.lanes = new LanePool({
      filename: new URL('../../workers/worker.js', import.meta.url).href,
      workerData,
      execArgv: [...process.execArgv, ...REQUIRE_ESM_OFF],
      lanes: {
        interactive: { threads: config.poolThreads, concurrentTasksPerWorker: recallWaitsOnIo ? 4 : 1 },
        // `end` may wait on the extraction endpoint for up to SERVICE_EXTRACTOR_TIMEOUT_MS:
        // meanwhile the thread takes other requested tasks instead of idling.
        requested: { threads: 1, concurrentTasksPerWorker: 4 },
        background: { threads: config.backgroundThreads, concurrentTasksPerWorker: 4 },
      },
      // A thread blocked in Atomics.wait between tasks runs no event loop: it could neither hear
      // the close request nor serve its PostgreSQL sockets (a server's goodbye, the client's
      // timers) while idle. A hand-off by message costs microseconds against a network read's
      // milliseconds; SQLite threads keep the blocking wait.
      atomics: config.postgres ? 'disabled' : 'sync',
      onError: (error: unknown) => log.error({ err: error }, 'pool worker failed'),
    });
  }

  /** Fraction of the interactive lane's capacity in use, 0..1. */
  get utilization(): number {
    return this.lanes.utilization('interactive');
  }

  /** Interactive tasks waiting for a thread. */
  get queueSize(): number {
    return this.lanes.queueSize('interactive');
  }

  /** Runs `task` in its declared lane. */
  run<T extends PoolOp>(task: TaskOf<T>): Promise<PoolResults[T]>;
  /**
   * Runs `task` in `lane`: only the embedding backfill's tasks, whose floor
   * (core/jobs/embedding-backfill.ts) sends small ones to the interactive lane when the background
   * lane gets no CPU.
   */
  run<T extends FloorOp>(task: TaskOf<T>, lane: Lane): Promise<PoolResults[T]>;
  async run<T extends PoolOp>(task: TaskOf<T>, lane: Lane = POOL_TASKS[task.op].lane): Promise<PoolResults[T]> {
    // A recall borrows the namespace's shared vector codes for the length of its task.
    const loan = (task.op === 'recall' || task.op === 'recallGrouped') && this.vectorCodes.enabled ? this.vectorCodes.lend(task.namespace) : null;
    if (loan) task = { ...task, vectorCodes: loan.handle };
    try {
      return await this.runTask(task, lane);
    } finally {
      loan?.giveBack();
    }
  }

  private async runTask<T extends PoolOp>(task: TaskOf<T>, lane: Lane): Promise<PoolResults[T]> {
    // Piscina's answers are untyped; the worker's `handle` answers a TaskOf<T> with a PoolReply<T>.
    // A thread that the postgres client's null-socket write still ended (shared/postgres-client-guard.ts
    // contains it where it can) is replaced by Piscina; the read runs once more on another thread.
    const result = (await this.lanes.run(lane, task).catch((error: unknown) => {
      if (!isNullSocketWrite(error)) throw error;
      this.onThreadLost?.(error as Error);
      return this.lanes.run(lane, task);
    })) as PoolReply<T>;
    if (!result.ok) throw ServiceError.fromWire(result.error);
    if (result.timings) this.onStageTimings?.(task.op, result.timings);
    if (result.readSide) this.onReadSide?.(result.readSide);
    if (result.replicaFailure) this.onReplicaFailure?.(result.replicaFailure);
    if (result.recoveryConflict) this.onRecoveryConflict?.();
    if (result.primaryFailure) this.onPrimaryFailure?.(result.primaryFailure);
    if (result.codesWanted) this.vectorCodes.wanted(task.namespace);
    return result.value;
  }

  /**
   * Waits until every interactive thread has warmed up (workers/warm-up.ts), so the first
   * clients are not the ones paying for model loading and cold code. One task per thread, sent
   * together: each thread takes one task at a time (concurrentTasksPerWorker 1 for local
   * embedders), so each goes to a different thread. One report per thread.
   */
  warmUp(): Promise<PoolResults['warmUp'][]> {
    return Promise.all(Array.from({ length: this.interactiveThreads }, () => this.run({ op: 'warmUp', namespace: this.serviceNamespace })));
  }

  /** Each thread closes its storage connections (bounded wait), then the threads are terminated. */
  async close(): Promise<void> {
    this.vectorCodes.clear();
    if (this.closeChannel) await askThreadsToClose(this.closeChannel, this.lanes.threadCount);
    await this.lanes.close();
  }
}
