// Keeps vectors flowing off the write path: after writes land, the pool embeds the backlog in
// batches and the writer attaches the vectors. One round is in flight at a time (a batch from
// each of a few namespaces), so the backfill never holds more than a round of background work.
// Runs on the main thread; the work happens elsewhere.
//
// The batches go to the background lane, whose threads run at SCHED_IDLE: they get only CPU time
// no other thread wants, so they never take it from recall. While recalls keep the cores busy that
// is almost none (two nodes under 16 concurrent recalls: the background thread waited ~29 s
// runnable for every ~1 s it ran, and 3 batches of 1,000 rows were embedded in 40 s), so new
// memories would stay lexical-only for as long as the load lasts. Hence a floor: while no batch of
// a round has settled for STARVED_MS, small batches go through the interactive lane, queued
// behind the recalls like one more client and paced to a bounded share of one thread (floor()):
// that share is what embedding may take from recall. Not with an endpoint embedder (openai): its
// batches wait on the network, which an idle-priority thread does on almost no CPU, and a floor
// would double paid calls to an endpoint that may be rate-limiting them.
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
export const RETRY_MS = 5_000;
/**
 * A round none of whose batches has settled for this long is taken as starved of CPU: a batch of
 * 64 takes ~0.5 s of one core with USE-lite (far less with the hashing embedder), so on a core
 * that is free now and then the round's batches settle one after another well within it.
 */
const STARVED_MS = 2_000;
/**
 * Rows per floor batch: ~15 ms of USE-lite, the longest a recall queued behind one waits for it.
 * Batches of 8 (~60 ms) with a quarter of a thread doubled recall p99 at c=4 while remembers
 * streamed at 200/s (bench:mixed --baseline-dist, 110 vs 58 ms): the floor is for progress, not
 * to keep up.
 */
const FLOOR_BATCH = 2;
/**
 * After each floor batch the floor pauses this many times as long as the batch ran in its thread,
 * so floor batches hold at most 1 / (1 + FLOOR_PAUSE_FACTOR) of one interactive thread's time,
 * whatever the load: a tenth, ~12 rows/s of USE-lite. (Its wait in the lane's queue is not
 * counted: the thread ran recalls then.)
 */
const FLOOR_PAUSE_FACTOR = 9;
/** The shortest pause after a floor task: one that found nothing ran for well under a millisecond. */
const FLOOR_MIN_PAUSE_MS = 20;
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
  /** poke() calls since start: the floor looks for writes made while it ran (floor()). */
  private pokes = 0;
  /** Resolved by the next poke() (the floor waits on it once it ran out of rows). */
  private nextPoke: { promise: Promise<void>; resolve: () => void } | null = null;
  /** When the floor's next interactive task may start (performance.now()): its pacing. */
  private interactiveFreeAt = 0;

  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    log: Logger,
    private readonly locks: JobLocks = LOCAL_JOB_LOCKS,
    /** The namespace the lookup of every namespace's backlog is sent under (it reads them all). */
    private readonly serviceNamespace = 'default',
    /** Whether a starved round gets the floor (not for an endpoint embedder: the header says why). */
    private readonly floorAllowed = true,
  ) {
    this.job = new SerialJob({
      // A run poked before the last one failed (writes while it ran) would start at once, inside
      // the back-off: skip it. The retry reads the whole backlog, so it covers those writes.
      work: (trigger) => (this.retryWaiting ? Promise.resolve() : this.drain(trigger)),
      onError: (error) => {
        // The embedder may be an unreachable endpoint: rows stay BM25-recallable; try again later.
        // retryAfter, not poke(RETRY_MS): a poke adds no timer while that queued run waits, and the
        // queued run started at once — with writes streaming in, every failure was followed by
        // another, and the endpoint saw no back-off at all.
        log.warn({ reason: error.message }, 'embedding backlog failed; will retry');
        this.job.retryAfter(RETRY_MS);
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
    this.pokes++;
    this.nextPoke?.resolve();
    this.nextPoke = null;
    if (!this.retryWaiting) this.job.poke();
  }

  /**
   * A run failed and its retry waits RETRY_MS: writes must not start runs early — with the
   * embedder down, each would fail once more and log once more. The retry reads the whole
   * backlog, so it covers what they wrote. (The job's only delayed poke is the retry.) A run poked
   * while the failing one ran is queued behind it, and starts only after onError armed the retry
   * (SerialJob reports a run before the next one starts): it finds the retry waiting and is skipped.
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
        for (const name of await this.pendingNamespaces()) this.rounds.add(name);
      }
      const namespaces = this.rounds.nextFew(NAMESPACES_PER_ROUND);
      if (namespaces.length === 0) return;
      const batches = namespaces.map((namespace) => this.embedBatch(namespace));
      const round = Promise.allSettled(batches);
      if (this.floorAllowed && (await starved(batches))) {
        try {
          await this.floor(namespaces, round);
        } catch (error) {
          // The round's batches are still in flight: the retry must not start a round beside them.
          await round;
          throw error;
        }
      }
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

  /**
   * Embeds `limit` rows of `namespace`'s backlog and attaches their vectors: the oldest in the
   * background lane, the newest in the interactive one (the floor: paced, and clear of the oldest
   * rows a starved background batch holds while the backlog is longer than that batch).
   */
  private async embedAndAttach(namespace: string, limit: number, lane: Lane): Promise<{ attached: number; remaining: boolean }> {
    const task = { op: 'embedPending', namespace, limit } as const;
    const { items, unembeddable, remaining } = lane === 'background' ? await this.pool.run(task) : await this.paced({ ...task, newestFirst: true });
    let attached = 0;
    if (items.length > 0 || unembeddable.length > 0) {
      // The writer attaches only rows still waiting: a row both lanes embedded is attached once.
      ({ attached } = await this.writer.send(namespace, { type: 'attachVectors', items, unembeddable }));
      this.embedded += attached;
      if (attached > 0) this.onAttached?.(namespace);
    }
    return { attached, remaining };
  }

  /**
   * Until the starved round settles: small batches of backlogs, one namespace after another, one
   * at a time through the interactive lane, paced (paced()). The round's namespaces first; once
   * they ran out of rows (the starved batches may still hold some: the writer attaches a row once,
   * whichever lane embedded it), those written since — the round stays open while its batches
   * wait for the CPU, and new writes would otherwise wait with it.
   */
  private async floor(namespaces: string[], round: Promise<unknown>): Promise<void> {
    let settled = false;
    const roundSettled = round.then(() => { settled = true; });
    let waiting = [...namespaces];
    let pokesSeen = this.pokes;
    for (let turn = 0; !settled && !this.job.stopped;) {
      if (waiting.length === 0) {
        if (this.pokes === pokesSeen) await Promise.race([roundSettled, this.poked()]);
        pokesSeen = this.pokes;
        waiting = this.rounds.nextFew(NAMESPACES_PER_ROUND);
        turn = 0;
        continue;
      }
      const at = turn % waiting.length;
      const { attached, remaining } = await this.embedAndAttach(waiting[at]!, FLOOR_BATCH, 'interactive');
      this.embeddedByFloor += attached;
      if (remaining) turn = at + 1;
      else waiting.splice(at, 1); // the next namespace moved into its place: same turn
    }
  }

  /** Resolves at the next poke(). */
  private poked(): Promise<void> {
    if (!this.nextPoke) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => { resolve = done; });
      this.nextPoke = { promise, resolve };
    }
    return this.nextPoke.promise;
  }

  /**
   * One of the floor's tasks in the interactive lane. It starts once the pause after the last one
   * is over: FLOOR_PAUSE_FACTOR times as long as that one ran, at least FLOOR_MIN_PAUSE_MS.
   */
  private async paced<T extends 'embedPending' | 'pendingNamespaces'>(task: TaskOf<T>): Promise<PoolResults[T]> {
    const pause = this.interactiveFreeAt - performance.now();
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    let ms = 0;
    try {
      const result = await this.pool.run(task, 'interactive');
      ms = result.ms;
      return result;
    } finally {
      this.interactiveFreeAt = performance.now() + Math.max(FLOOR_PAUSE_FACTOR * ms, FLOOR_MIN_PAUSE_MS);
    }
  }

  /**
   * The namespaces with a backlog, a small read of the background lane: asked of the interactive
   * lane too (paced) if the background lane has not answered within STARVED_MS and the floor is
   * allowed; the first answer counts.
   */
  private async pendingNamespaces(): Promise<string[]> {
    const task = { op: 'pendingNamespaces', namespace: this.serviceNamespace } as const;
    const background = this.pool.run(task);
    if (!this.floorAllowed) return (await background).names;
    const first = await within(background, STARVED_MS);
    if (first !== STARVED) return first.names;
    // The first lane to answer; a failure only when both fail (the interactive lane's reported).
    const { names } = await Promise.any([this.paced(task), background])
      .catch((error: AggregateError) => { throw error.errors[0]; });
    return names;
  }
}

/**
 * Resolves true once none of `batches` has settled for STARVED_MS (since the start or the last
 * one that did), false once they all have.
 */
function starved(batches: Promise<unknown>[]): Promise<boolean> {
  return new Promise((resolve) => {
    let left = batches.length;
    let timer: NodeJS.Timeout | undefined;
    const wait = () => { timer = setTimeout(() => { left = -1; resolve(true); }, STARVED_MS); };
    const settle = () => {
      if (left < 0) return; // already starved
      clearTimeout(timer);
      if (--left === 0) resolve(false);
      else wait();
    };
    wait();
    for (const batch of batches) batch.then(settle, settle);
  });
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
