// Keeps the IVF vector index in step with the vectors, in the background: trains the first
// generation of centroids once a namespace has enough vectors, trains a new one when it has
// grown 4× since, moves stale vectors into the newest generation's cells, and retires the old
// generation once it is empty. Runs on the main thread; the pool computes and the writer
// applies, a batch at a time, so recall and writes interleave with a rebuild.
import type { Logger } from '../../shared/logger.js';
import type { WriterClient } from '../writer-client.js';
import type { ReadPool } from '../pool/read-pool.js';
import type { VectorIndexStatus } from '../../shared/protocol/pool.js';
import type { SupersededCursor } from '../../shared/protocol/writer.js';
import { SerialJob } from './serial-job.js';
import { LOCAL_JOB_LOCKS, type JobLocks } from './job-locks.js';
import { NamespaceRounds } from './namespace-rounds.js';
import type { RunTrigger } from './serial-job.js';

/** Vectors moved per writer command: big enough to amortise, small enough not to stall writes. */
const MOVE_BATCH = 1024;
/** Superseded facts looked at per writer command by the retire sweep (each a point lookup, maybe a move). */
const RETIRE_BATCH = 1024;
/** A generation is retrained once the namespace holds this many times the vectors it saw. */
const GROWTH_TO_RETRAIN = 4;
/** Writes poke often; the index is checked at most this often (ms) unless flushed. */
const DEFAULT_DELAY_MS = 5_000;

export function needsTraining(status: VectorIndexStatus, minVectors: number): boolean {
  if (status.vectors < minVectors) return false;
  return status.trainedOn === null || status.vectors >= GROWTH_TO_RETRAIN * status.trainedOn;
}

export class VectorIndexer {
  private readonly job: SerialJob<void>;
  /** The last status seen (metrics, logs). */
  status: VectorIndexStatus | null = null;
  /** Upkeep runs started. */
  runs = 0;
  /** Vectors the indexer moved into newer cells (tests check that placement needed none). */
  moved = 0;
  /** Superseded facts' vectors the retire sweep moved out of the cells default recalls read. */
  retiredVectors = 0;
  /**
   * Per namespace, where the retire sweep goes on (docs/superseded-vectors.md); absent: from the
   * start (once per process: it also retires the vectors of a file written before retired cells);
   * null: the backend keeps no retired vectors.
   */
  private readonly retireSweep = new Map<string, SupersededCursor | null>();
  /** Rows marked embedded without a vector went back to the backlog (the backfill listens). */
  onRepaired: ((namespace: string) => void) | null = null;
  /** Namespaces whose index may be behind, taking turns. */
  private readonly rounds = new NamespaceRounds();
  /** Every namespace's index is to be looked at (start, a flush, the cluster's schedule). */
  private discover = true;

  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    private readonly log: Logger,
    private readonly minVectors: number,
    private readonly delayMs = DEFAULT_DELAY_MS,
    private readonly locks: JobLocks = LOCAL_JOB_LOCKS,
    /** The namespace the listing of every namespace is sent under (it reads them all). */
    private readonly serviceNamespace = 'default',
  ) {
    this.job = new SerialJob({ work: (trigger) => this.upkeep(trigger), onError: (error) => this.failed(error) });
    // On a cluster the vectors other nodes attach do not poke this node: look every delayMs.
    if (locks.clustered) this.job.every(delayMs);
  }

  /** Vectors were attached in `namespace` (unknown: in any): check its index soon. Cheap to call often. */
  poke(namespace?: string): void {
    if (namespace === undefined) this.discover = true;
    else this.rounds.add(namespace);
    this.job.poke(this.delayMs);
  }

  /** Brings the index up to date now; resolves when it is (tests and benchmarks wait on it). */
  async flush(): Promise<void> {
    if (this.job.stopped) return;
    await this.job.run().catch((error: Error) => this.failed(error));
  }

  /**
   * Stops upkeep. A run in progress is not waited for: training at 1M keeps a pool thread busy
   * for ~100 s, longer than a graceful shutdown should take. Closing the pool then rejects its
   * task, and whatever the writer already committed is a consistent state (every step is).
   */
  close(): void {
    void this.job.stop();
  }

  /** Each namespace waiting, in turn, brought up to date. */
  private async upkeep(trigger: RunTrigger): Promise<void> {
    this.runs++;
    if (this.discover || trigger !== 'poke') {
      this.discover = false;
      for (const namespace of await this.pool.run({ op: 'namespaceNames', namespace: this.serviceNamespace })) this.rounds.add(namespace);
    }
    for (let namespace = this.rounds.next(); namespace !== undefined && !this.job.stopped; namespace = this.rounds.next()) {
      // Done before the work: vectors attached meanwhile add it again.
      this.rounds.done(namespace);
      await this.catchUp(namespace);
    }
  }

  private failed(error: Error): void {
    // A later poke retries: the index only ever lags, recall stays correct meanwhile.
    if (!this.job.stopped) this.log.warn({ reason: error.message }, 'vector index upkeep failed; will retry');
  }

  private async catchUp(namespace: string): Promise<void> {
    while (!this.job.stopped) {
      // Another node keeps the namespace's index.
      if (!(await this.locks.hold('vectorIndex'))) return;
      const status = await this.pool.run({ op: 'vectorIndexStatus', namespace });
      this.status = status;
      if (needsTraining(status, this.minVectors)) {
        const started = performance.now();
        const { trainedOn, centroids } = await this.pool.run({ op: 'trainVectorIndex', namespace });
        if (this.job.stopped) return;
        const { generation, cells } = await this.writer.send(namespace, { type: 'installVectorGeneration', trainedOn, centroids });
        this.log.info({ namespace, generation, cells, trainedOn, ms: Math.round(performance.now() - started) }, 'vector index trained');
        continue;
      }
      // Stale vectors that cannot move now (the generation changed under the pool) wait for
      // the next poke; an older generation is still retired if nothing lives in it any more.
      if (status.stale > 0 && (await this.moveStale(namespace))) continue;
      // The shared vector codes follow (a background task; recall scans vec0 until they are
      // there). Before an old generation retires: built in the newest cells, they stay valid.
      // A namespace without cells has no codes to keep: no task for it.
      if (status.cells > 0) await this.pool.vectorCodes?.refresh(namespace);
      if (status.generations > 1) {
        const { retired } = await this.writer.send(namespace, { type: 'retireVectorGenerations' });
        if (retired > 0) this.log.info({ retired }, 'old vector index generation retired');
      }
      await this.retireSuperseded(namespace);
      return;
    }
  }

  /**
   * Superseded facts whose validity ended since the last sweep (all of them, the first time),
   * their vectors out of the cells a default recall reads, a batch per writer command.
   */
  private async retireSuperseded(namespace: string): Promise<void> {
    let after = this.retireSweep.get(namespace);
    while (after !== null && !this.job.stopped) {
      const { moved, done, next } = await this.writer.send(namespace, { type: 'retireSupersededVectors', after: after ?? null, limit: RETIRE_BATCH });
      this.retireSweep.set(namespace, next);
      this.retiredVectors += moved;
      if (done) return;
      after = next;
    }
  }

  /** Moves stale vectors until none is left; false when none could move (try again later). */
  private async moveStale(namespace: string): Promise<boolean> {
    let total = 0;
    for (;;) {
      if (this.job.stopped) return false;
      const { moves } = await this.pool.run({ op: 'staleVectorMoves', namespace, limit: MOVE_BATCH });
      if (moves.length === 0) return total > 0;
      const { moved, repaired } = await this.writer.send(namespace, { type: 'moveVectors', moves });
      if (repaired > 0) this.onRepaired?.(namespace);
      // Nothing changed: the newest generation changed under the pool's feet.
      if (moved + repaired === 0) return total > 0;
      total += moved + repaired;
      this.moved += moved;
      if (moves.length < MOVE_BATCH) return true;
    }
  }
}
