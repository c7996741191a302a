// Keeps vectors flowing off the write path: after writes land, the pool embeds the backlog in
// batches and the writer attaches the vectors. One batch is in flight at a time so embedding
// never crowds recall out of the pool. Runs on the main thread; the work happens elsewhere.
import type { Logger } from '../../shared/logger.js';
import type { WriterClient } from '../writer-client.js';
import type { ReadPool } from '../pool/read-pool.js';
import { SerialJob } from './serial-job.js';
import { CLUSTER_POLL_MS, LOCAL_JOB_LOCKS, type JobLocks } from './job-locks.js';

const BATCH_SIZE = 64;
const RETRY_MS = 5_000;
export class EmbeddingBackfill {
  private readonly job: SerialJob<void>;
  /** Vectors attached since start (metrics, tests). */
  embedded = 0;
  /** Called after vectors were attached (the vector indexer listens). */
  onAttached: (() => void) | null = null;

  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    log: Logger,
    private readonly locks: JobLocks = LOCAL_JOB_LOCKS,
  ) {
    this.job = new SerialJob({
      // A run poked before the last one failed would start at once, inside the back-off: skip it.
      work: () => (this.retryWaiting ? Promise.resolve() : this.drain()),
      onError: (error) => {
        // The embedder may be an unreachable endpoint: rows stay BM25-recallable; try again later.
        log.warn({ reason: error.message }, 'embedding backlog failed; will retry');
        this.job.poke(RETRY_MS);
      },
    });
    // On a cluster other nodes' writes do not poke this node: the holder looks for them, and the
    // others try for the lock, every CLUSTER_POLL_MS (a schedule, which idle() does not wait for).
    if (locks.clustered) this.job.every(CLUSTER_POLL_MS);
  }

  /** Something was written: embed whatever is pending. Cheap to call often. */
  poke(): void {
    if (!this.retryWaiting) this.job.poke();
  }

  /**
   * A run failed and its retry waits RETRY_MS: writes must not start runs early — with the
   * embedder down, each would fail once more and log once more. The retry reads the whole
   * backlog, so it covers what they wrote. (The job's only delayed poke is the retry.)
   */
  private get retryWaiting(): boolean {
    return this.job.delayedPokeWaiting;
  }

  /** Resolves when no embedding work is pending, a retry included (tests and benchmarks wait on it). */
  idle(): Promise<void> {
    return this.job.idle();
  }

  close(): void {
    void this.job.stop();
  }

  private async drain(): Promise<void> {
    while (!this.job.stopped) {
      // Another node embeds the namespace's backlog, this node's writes included.
      if (!(await this.locks.hold('embeddingBackfill'))) return;
      const { items, unembeddable, remaining } = await this.pool.run({ op: 'embedPending', limit: BATCH_SIZE });
      if (items.length === 0 && unembeddable.length === 0) return;
      const { attached } = await this.writer.send({ type: 'attachVectors', items, unembeddable });
      this.embedded += attached;
      if (attached > 0) this.onAttached?.();
      if (!remaining) return;
    }
  }
}
