// Keeps vectors flowing off the write path: after writes land, the pool embeds the backlog in
// batches and the writer attaches the vectors. One round is in flight at a time (a batch from
// each of a few namespaces) so embedding never crowds recall out of the pool. Runs on the main
// thread; the work happens elsewhere.
//
// The batches go to the background lane, whose threads run at SCHED_IDLE: they get only CPU time
// no other thread wants. While recalls keep the cores busy that is almost none (two nodes under
// 16 concurrent recalls: the background thread waited ~29 s runnable for every ~1 s it ran, and
// 3 batches of 1,000 rows were embedded in 40 s), so new memories would stay lexical-only for
// as long as the load lasts. Hence a floor: a round the background lane has not answered within
// STARVED_MS goes on, meanwhile, as small batches through the interactive lane, queued behind
// the recalls like one more client and paced to a bounded share of one thread (floor()).
import type { Logger } from '../../shared/logger.js';
import type { WriterClient } from '../writer-client.js';
import type { ReadPool } from '../pool/read-pool.js';
import { SerialJob } from './serial-job.js';
import { CLUSTER_POLL_MS, LOCAL_JOB_LOCKS, type JobLocks } from './job-locks.js';
import { NamespaceRounds } from './namespace-rounds.js';
import type { RunTrigger } from './serial-job.js';
import type { Lane } from '../pool/lane-pool.js';
import type { PoolResults, TaskOf } from '../../shared/protocol/pool.js';

const BATCH_SIZE = 64;
/**
 * Namespaces whose batches are embedded and attached together, one turn each. With many tenants
 * each write leaves a backlog of one row in its own namespace: a pool task and a writer commit
 * per row starved the writes of the CPU (1,000 tenants wrote at 0.12× one namespace's rate).
 * Together, their vectors reach the writer as commands of one batch (one transaction).
 */
const NAMESPACES_PER_ROUND = 16;
const RETRY_MS = 5_000;
/**
 * A round the background lane has not answered by then is taken as starved of CPU: a batch of
 * 64 takes ~0.5 s of one core with USE-lite, far less with the hashing embedder.
 */
const STARVED_MS = 2_000;
/** Rows per floor batch: ~60 ms of USE-lite, the longest a recall queued behind one waits for it. */
const FLOOR_BATCH = 8;
/**
 * After each floor batch the floor pauses this many times as long as the batch ran in its thread,
 * so floor batches hold at most 1 / (1 + FLOOR_PAUSE_FACTOR) of one interactive thread's time,
 * whatever the load. (Its wait in the lane's queue is not counted: the thread ran recalls then.)
 */
const FLOOR_PAUSE_FACTOR = 3;
const STARVED = Symbol('starved');
export class EmbeddingBackfill {
  private readonly job: SerialJob<void>;
  /** Vectors attached since start (metrics, tests). */
  embedded = 0;
  /** Of those, the vectors the floor's batches attached (tests, diagnostics). */
  embeddedByFloor = 0;
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
        for (const name of await this.unstarved({ op: 'pendingNamespaces', namespace: this.serviceNamespace })) this.rounds.add(name);
      }
      const namespaces = this.rounds.nextFew(NAMESPACES_PER_ROUND);
      if (namespaces.length === 0) return;
      const round = Promise.allSettled(namespaces.map((namespace) => this.embedBatch(namespace)));
      if ((await within(round, STARVED_MS)) === STARVED) await this.floor(namespaces, round);
      const results = await round;
      const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  /** One batch of `namespace`'s backlog embedded and attached. */
  private async embedBatch(namespace: string): Promise<void> {
    this.fresh.delete(namespace);
    const { remaining } = await this.embedAndAttach(namespace, BATCH_SIZE, 'background');
    // A write that arrived after the batch was read keeps the namespace in the rounds.
    if (!remaining && !this.fresh.has(namespace)) this.rounds.done(namespace);
  }

  /** Embeds the oldest `limit` rows of `namespace`'s backlog in `lane` and attaches their vectors. */
  private async embedAndAttach(namespace: string, limit: number, lane: Lane): Promise<{ attached: number; found: number; remaining: boolean; ms: number }> {
    const { items, unembeddable, remaining, ms } = await this.pool.run({ op: 'embedPending', namespace, limit }, lane);
    let attached = 0;
    if (items.length > 0 || unembeddable.length > 0) {
      // The writer attaches only rows still waiting: a row both lanes embedded is attached once.
      ({ attached } = await this.writer.send(namespace, { type: 'attachVectors', items, unembeddable }));
      this.embedded += attached;
      if (attached > 0) this.onAttached?.(namespace);
    }
    return { attached, found: items.length + unembeddable.length, remaining, ms };
  }

  /**
   * Until the starved round settles: small batches of its namespaces' backlogs, in turn, one at a
   * time through the interactive lane, each followed by a pause of FLOOR_PAUSE_FACTOR times as
   * long as it ran. They take the oldest rows, the ones the starved batches hold too: when those
   * batches end, the writer skips what the floor attached already (the duplicated CPU is the
   * background lane's, which no one else wanted).
   */
  private async floor(namespaces: string[], round: Promise<unknown>): Promise<void> {
    let settled = false;
    void round.then(() => { settled = true; });
    const waiting = [...namespaces];
    for (let turn = 0; !settled && !this.job.stopped && waiting.length > 0; turn++) {
      const namespace = waiting[turn % waiting.length]!;
      const { attached, found, ms } = await this.embedAndAttach(namespace, FLOOR_BATCH, 'interactive');
      this.embeddedByFloor += attached;
      if (found === 0) waiting.splice(waiting.indexOf(namespace), 1);
      await within(round, FLOOR_PAUSE_FACTOR * ms);
    }
  }

  /**
   * A small read of the background lane (the namespaces with a backlog): asked of the interactive
   * lane too if the background lane has not answered within STARVED_MS; the first answer counts.
   */
  private async unstarved<T extends 'pendingNamespaces'>(task: TaskOf<T>): Promise<PoolResults[T]> {
    const background = this.pool.run(task);
    const first = await within(background, STARVED_MS);
    if (first !== STARVED) return first;
    // The first lane to answer; a failure only when both fail (the interactive lane's reported).
    return Promise.any([this.pool.run(task, 'interactive'), background])
      .catch((error: AggregateError) => { throw error.errors[0]; });
  }
}

/** `promise`'s value if it settles within `ms`, else STARVED (it rejects if `promise` rejects first). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof STARVED> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof STARVED>((resolve) => { timer = setTimeout(resolve, ms, STARVED); });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
