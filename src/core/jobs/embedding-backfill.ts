// Keeps vectors flowing off the write path: after writes land, the pool embeds the backlog in
// batches and the writer attaches the vectors. One round is in flight at a time (a batch from
// each of a few namespaces) so embedding never crowds recall out of the pool. Runs on the main
// thread; the work happens elsewhere.
import type { Logger } from '../../shared/logger.js';
import type { WriterClient } from '../writer-client.js';
import type { ReadPool } from '../pool/read-pool.js';
import { SerialJob } from './serial-job.js';
import { CLUSTER_POLL_MS, LOCAL_JOB_LOCKS, type JobLocks } from './job-locks.js';
import { NamespaceRounds } from './namespace-rounds.js';
import type { RunTrigger } from './serial-job.js';

const BATCH_SIZE = 64;
/**
 * Namespaces whose batches are embedded and attached together, one turn each. With many tenants
 * each write leaves a backlog of one row in its own namespace: a pool task and a writer commit
 * per row starved the writes of the CPU (1,000 tenants wrote at 0.12× one namespace's rate).
 * Together, their vectors reach the writer as commands of one batch (one transaction).
 */
const NAMESPACES_PER_ROUND = 16;
const RETRY_MS = 5_000;
export class EmbeddingBackfill {
  private readonly job: SerialJob<void>;
  /** Vectors attached since start (metrics, tests). */
  embedded = 0;
  /** Called after vectors were attached in a namespace (the vector indexer listens). */
  onAttached: ((namespace: string) => void) | null = null;
  /** Namespaces with rows waiting for vectors, taking turns a batch at a time. */
  private readonly rounds = new NamespaceRounds();
  /** Namespaces written since their last batch was read: not done yet, whatever that batch said. */
  private readonly fresh = new Set<string>();
  /** Some namespaces' backlogs are not known here (start, a restore, another node's writes): look them up. */
  private discover = true;

  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    log: Logger,
    private readonly locks: JobLocks = LOCAL_JOB_LOCKS,
    /** The namespace the lookup of every namespace's backlog is sent under (it reads them all). */
    private readonly serviceNamespace = 'default',
  ) {
    this.job = new SerialJob({
      // A run poked before the last one failed would start at once, inside the back-off: skip it.
      work: (trigger) => (this.retryWaiting ? Promise.resolve() : this.drain(trigger)),
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

  /**
   * Something was written in `namespace` (unknown: look for every namespace's backlog): embed
   * whatever is pending. Cheap to call often.
   */
  poke(namespace?: string): void {
    if (namespace === undefined) this.discover = true;
    else {
      this.rounds.add(namespace);
      this.fresh.add(namespace);
    }
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

  /** A batch per namespace in turn (NamespaceRounds) until no namespace has rows waiting. */
  private async drain(trigger: RunTrigger): Promise<void> {
    while (!this.job.stopped) {
      // Another node embeds the backlogs, this node's writes included.
      if (!(await this.locks.hold('embeddingBackfill'))) return;
      if (this.discover || trigger !== 'poke') {
        this.discover = false;
        trigger = 'poke';
        for (const name of await this.pool.run({ op: 'pendingNamespaces', namespace: this.serviceNamespace })) this.rounds.add(name);
      }
      const namespaces = this.rounds.nextFew(NAMESPACES_PER_ROUND);
      if (namespaces.length === 0) return;
      const results = await Promise.allSettled(namespaces.map((namespace) => this.embedBatch(namespace)));
      const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  /** One batch of `namespace`'s backlog embedded and attached. */
  private async embedBatch(namespace: string): Promise<void> {
    this.fresh.delete(namespace);
    const { items, unembeddable, remaining } = await this.pool.run({ op: 'embedPending', namespace, limit: BATCH_SIZE });
    if (items.length > 0 || unembeddable.length > 0) {
      const { attached } = await this.writer.send(namespace, { type: 'attachVectors', items, unembeddable });
      this.embedded += attached;
      if (attached > 0) this.onAttached?.(namespace);
    }
    // A write that arrived after the batch was read keeps the namespace in the rounds.
    if (!remaining && !this.fresh.has(namespace)) this.rounds.done(namespace);
  }
}
