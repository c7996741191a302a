// The service's one copy of each namespace's vector codes (workers/ivf/vector-codes.ts), held
// here on the main thread and handed to every recall of the namespace with its task: the pool
// threads share the memory, none builds or copies it. Stores are built and kept current by a
// background pool task (workers/sqlite/vector-codes.ts): after the IVF upkeep of a namespace
// (new vectors, a new generation), and once for a namespace recalled without a store. One build
// at a time; a recall never waits for one (it scans vec0 until the store is here).
//
// SERVICE_VECTOR_CODES_MB bounds every namespace's stores together: making room for one drops the
// least recently recalled others (their recalls scan vec0). A namespace dropped or refused is
// not tried again from a recall for RECALL_RETRY_MS, so two namespaces that do not fit together
// cannot rebuild each other in turn on every recall.
import type { Logger } from '../../shared/logger.js';
import { SHARED_CODES_RETIRED, type CodesRefresh, type SharedCodesHandle } from '../../shared/protocol/pool.js';
import { BoundedMap } from '../../shared/bounded-map.js';

/** Runs the background task that refreshes one namespace's store. */
export type RefreshTask = (namespace: string, previous: SharedCodesHandle | null, limitBytes: number) => Promise<CodesRefresh>;

/** A namespace recalled without a store is built for at most this often (ms). */
export const RECALL_RETRY_MS = 60_000;
/** Namespaces whose last ask is remembered (any name a client sends is one): bounded, the oldest forgotten. */
const ASKED_KEPT = 4096;

interface Held {
  handle: SharedCodesHandle;
  /** What recalls are handed: the store without the writer's bookkeeping (which can be long). */
  forReaders: SharedCodesHandle;
  bytes: number;
}

export class VectorCodesRegistry {
  /** Least recently recalled first. */
  private readonly held = new Map<string, Held>();
  /** When a recall last asked for a build of a namespace it found without a store. */
  private readonly asked = new BoundedMap<string, number>(ASKED_KEPT);
  private readonly queued = new Map<string, Promise<void>>();
  private chain: Promise<unknown> = Promise.resolve();
  /** Builds and appends run (tests, metrics). */
  refreshes = 0;
  builds = 0;

  constructor(private readonly refreshTask: RefreshTask, readonly limitBytes: number, private readonly log: Logger) {}

  get enabled(): boolean {
    return this.limitBytes > 0;
  }

  /** Bytes held by every namespace's store. */
  get bytes(): number {
    let total = 0;
    for (const { bytes } of this.held.values()) total += bytes;
    return total;
  }

  get namespaces(): number {
    return this.held.size;
  }

  /** The store to hand a recall of `namespace` (null: none yet; one is asked for, at most every RECALL_RETRY_MS). */
  forRecall(namespace: string): SharedCodesHandle | null {
    const held = this.held.get(namespace);
    if (held) {
      this.held.delete(namespace);
      this.held.set(namespace, held);
      return held.forReaders;
    }
    const now = Date.now();
    if (this.enabled && now - (this.asked.get(namespace) ?? -Infinity) >= RECALL_RETRY_MS) {
      this.asked.set(namespace, now);
      void this.refresh(namespace);
    }
    return null;
  }

  /**
   * Brings the namespace's store up to date with its vectors (a background task), after those
   * already asked for. A refresh asked for while one of the same namespace waits joins it.
   */
  refresh(namespace: string): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    const waiting = this.queued.get(namespace);
    if (waiting) return waiting;
    const run = this.chain.then(async () => {
      this.queued.delete(namespace);
      await this.refreshNow(namespace);
    });
    this.queued.set(namespace, run);
    this.chain = run.catch(() => {});
    return run.catch((error: Error) => this.log.warn({ namespace, reason: error.message }, 'vector codes refresh failed; recall scans vec0'));
  }

  /** Drops every store (closing). */
  clear(): void {
    for (const namespace of [...this.held.keys()]) this.drop(namespace);
  }

  private drop(namespace: string): void {
    const held = this.held.get(namespace);
    this.held.delete(namespace);
    if (held) retire(held.handle);
  }

  private async refreshNow(namespace: string): Promise<void> {
    const previous = this.held.get(namespace) ?? null;
    const result = await this.refreshTask(namespace, previous?.handle ?? null, this.limitBytes);
    this.refreshes++;
    this.log.debug({ namespace, outcome: result.outcome, vectors: result.vectors, generations: result.handle?.generations }, 'vector codes refreshed');
    if (!result.handle) {
      if (previous) this.drop(namespace);
      return;
    }
    if (previous && previous.handle.id !== result.handle.id) retire(previous.handle);
    if (result.outcome === 'built') {
      this.builds++;
      this.log.info({ namespace, vectors: result.vectors, mib: Math.round(result.bytes / 2 ** 20), heldMib: Math.round(this.bytes / 2 ** 20) }, 'vector codes built');
    }
    // Room for it: the least recently recalled others go (they keep vec0 until built again).
    this.held.delete(namespace);
    for (const [other, { bytes }] of this.held) {
      if (this.bytes + result.bytes <= this.limitBytes) break;
      this.drop(other);
      this.asked.set(other, Date.now());
      this.log.info({ namespace: other, mib: Math.round(bytes / 2 ** 20) }, 'vector codes dropped to make room');
    }
    if (this.bytes + result.bytes <= this.limitBytes) {
      this.held.set(namespace, { handle: result.handle, forReaders: { ...result.handle, above: [], reembedding: [] }, bytes: result.bytes });
    }
  }
}

/** Tells the threads still holding a store that it is replaced or dropped (they let it go at their next recall). */
function retire(handle: SharedCodesHandle): void {
  Atomics.store(new Int32Array(handle.memory.buffer, 0, SHARED_CODES_RETIRED + 1), SHARED_CODES_RETIRED, 1);
}
