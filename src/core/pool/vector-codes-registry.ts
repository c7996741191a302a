// The service's one copy of each namespace's vector codes (workers/ivf/vector-codes.ts), held
// here on the main thread and lent to every recall of the namespace with its task: the pool
// threads share the memory, none builds or copies it, and none keeps it past the task. Stores are
// built and kept current by a background pool task (workers/sqlite/vector-codes.ts): after the
// IVF upkeep of an indexed namespace, and for an indexed namespace whose recall found no store
// (the recall says so in its reply; at most once per RECALL_RETRY_MS). One build at a time; a
// recall never waits for one (it scans vec0 until the store is here).
//
// SERVICE_VECTOR_CODES_MB bounds everything the codes hold at once: the stores held, the one
// being built, a store being rebuilt (it serves until its successor is handed out), and stores
// replaced or dropped while a recall still has them (counted until the last such task ends).
// Making room:
//   - the upkeep never drops another namespace's store: it builds a namespace nobody holds only
//     into room that is free, so writes to namespaces nobody recalls cannot push out one that is;
//   - a recall's build may drop stores not recalled for KEEP_RECALLED_MS, least recently recalled
//     first, never one recalled since: two namespaces recalled in turn that do not fit together
//     do not rebuild each other; the one holding keeps its store, the other scans vec0.
import type { Logger } from '../../shared/logger.js';
import { SHARED_CODES_RETIRED, type CodesRefresh, type SharedCodesHandle } from '../../shared/protocol/pool.js';
import { BoundedMap } from '../../shared/bounded-map.js';

/** Runs the background task that refreshes one namespace's store, within `limitBytes` for a new one. */
export type RefreshTask = (namespace: string, previous: SharedCodesHandle | null, limitBytes: number) => Promise<CodesRefresh>;

/** An indexed namespace recalled without a store is built for at most this often (ms). */
export const RECALL_RETRY_MS = 60_000;
/** A store recalled this recently (ms) is never dropped to make room for another namespace's. */
export const KEEP_RECALLED_MS = 10 * 60_000;
/** Namespaces whose last ask is remembered (bounded, the oldest forgotten). */
const ASKED_KEPT = 4096;

/** What started a refresh: the IVF upkeep (never drops others) or a recall that found no store. */
export type RefreshReason = 'upkeep' | 'recall';

interface Store {
  handle: SharedCodesHandle;
  bytes: number;
  /** Recall tasks that have it now. */
  lent: number;
  /** Date.now() of the last recall handed it (0: none yet). */
  recalledAt: number;
}

/** A store lent to one recall task: given back when the task settles. */
export interface CodesLoan {
  readonly handle: SharedCodesHandle;
  giveBack(): void;
}

export class VectorCodesRegistry {
  /** Least recently recalled first. */
  private readonly held = new Map<string, Store>();
  /** Replaced or dropped while lent: counted until given back. */
  private readonly leaving = new Set<Store>();
  /** When a recall last asked for a build of a namespace it found without a store. */
  private readonly asked = new BoundedMap<string, number>(ASKED_KEPT);
  /** Namespaces whose store alone needs more than the whole budget, with the bytes it would take (bounded, the oldest forgotten). */
  private readonly tooLarge = new BoundedMap<string, number>(ASKED_KEPT);
  private readonly queued = new Map<string, Promise<void>>();
  private chain: Promise<unknown> = Promise.resolve();
  /** Refresh tasks run, full builds among them, and the most the codes held at once (tests, metrics). */
  refreshes = 0;
  builds = 0;
  peakBytes = 0;

  constructor(private readonly refreshTask: RefreshTask, readonly limitBytes: number, private readonly log: Logger, private readonly now = () => Date.now()) {}

  get enabled(): boolean {
    return this.limitBytes > 0;
  }

  /** Bytes the codes hold: every namespace's store, and replaced ones still lent to a recall. */
  get bytes(): number {
    let total = 0;
    for (const { bytes } of this.held.values()) total += bytes;
    for (const { bytes } of this.leaving) total += bytes;
    return total;
  }

  get namespaces(): number {
    return this.held.size;
  }

  /**
   * Indexed namespaces whose last build found their store alone larger than the budget: they
   * scan vec0 until they shrink or the budget grows (metrics; the bench stops waiting for them).
   */
  get tooLargeNamespaces(): number {
    return this.tooLarge.size;
  }

  /** The store held for `namespace` now, without lending it (tests, the bench). */
  peek(namespace: string): SharedCodesHandle | null {
    return this.held.get(namespace)?.handle ?? null;
  }

  /** Lends the namespace's store to one recall task (null: none held); the caller gives it back when the task settles. */
  lend(namespace: string): CodesLoan | null {
    const store = this.held.get(namespace);
    if (!store) return null;
    this.held.delete(namespace);
    this.held.set(namespace, store);
    store.lent++;
    store.recalledAt = this.now();
    let given = false;
    return {
      handle: store.handle,
      giveBack: () => {
        if (given) return;
        given = true;
        if (--store.lent === 0) this.leaving.delete(store);
      },
    };
  }

  /** A recall of an indexed namespace found no store to scan: one is built, at most every RECALL_RETRY_MS. */
  wanted(namespace: string): void {
    if (!this.enabled || this.held.has(namespace)) return;
    const now = this.now();
    if (now - (this.asked.get(namespace) ?? -Infinity) < RECALL_RETRY_MS) return;
    this.asked.set(namespace, now);
    void this.refresh(namespace, 'recall');
  }

  /**
   * Brings the namespace's store up to date with its vectors (a background task), after those
   * already asked for. A refresh asked for while one of the same namespace waits joins it.
   */
  refresh(namespace: string, reason: RefreshReason = 'upkeep'): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    const waiting = this.queued.get(namespace);
    if (waiting) return waiting;
    const run = this.chain.then(async () => {
      this.queued.delete(namespace);
      await this.refreshNow(namespace, reason);
    });
    this.queued.set(namespace, run);
    this.chain = run.catch(() => {});
    return run.catch((error: Error) => this.log.warn({ namespace, reason: error.message }, 'vector codes refresh failed; recall scans vec0'));
  }

  /** Resolves when every refresh asked for so far has ended (tests). */
  settled(): Promise<void> {
    return this.chain.then(() => {});
  }

  /** Drops every store (closing). */
  clear(): void {
    for (const namespace of [...this.held.keys()]) this.drop(namespace);
  }

  private drop(namespace: string): void {
    const store = this.held.get(namespace);
    this.held.delete(namespace);
    if (store) this.let(store);
  }

  /** A store leaves: counted until the recalls that have it end. */
  private let(store: Store): void {
    retire(store.handle);
    if (store.lent > 0) this.leaving.add(store);
  }

  /** Others' stores this refresh may drop to make room: none for the upkeep; for a recall, those not recalled for KEEP_RECALLED_MS. */
  private droppable(namespace: string, reason: RefreshReason): string[] {
    if (reason === 'upkeep') return [];
    const before = this.now() - KEEP_RECALLED_MS;
    return [...this.held].filter(([other, store]) => other !== namespace && store.recalledAt < before).map(([other]) => other);
  }

  /** Remembers (and says once) that a namespace's store alone is larger than the budget; forgets it once one fits. */
  private noteSize(namespace: string, neededBytes: number | undefined): void {
    if (neededBytes === undefined || neededBytes <= this.limitBytes) {
      this.tooLarge.delete(namespace);
      return;
    }
    if (this.tooLarge.get(namespace) === undefined) {
      this.log.info({ namespace, neededMib: Math.ceil(neededBytes / 2 ** 20), limitMib: Math.floor(this.limitBytes / 2 ** 20) },
        'vector codes larger than SERVICE_VECTOR_CODES_MB; recall scans vec0');
    }
    this.tooLarge.set(namespace, neededBytes);
  }

  private async refreshNow(namespace: string, reason: RefreshReason, again = false): Promise<void> {
    const previous = this.held.get(namespace) ?? null;
    // A namespace nobody holds is built by the upkeep only into free room (see the header).
    const droppable = this.droppable(namespace, reason);
    const freed = droppable.reduce((n, other) => n + this.held.get(other)!.bytes, 0);
    // Room for a new store: the old one of this namespace serves until the new one is handed out.
    const room = this.limitBytes - this.bytes + freed;
    const result = await this.refreshTask(namespace, previous?.handle ?? null, Math.max(0, room));
    this.refreshes++;
    this.log.debug({ namespace, reason, outcome: result.outcome, vectors: result.vectors, generations: result.handle?.generations }, 'vector codes refreshed');
    this.noteSize(namespace, result.neededBytes);
    if (!result.handle) {
      if (previous) this.drop(namespace);
      // A rebuild that did not fit beside the old store: built alone once the old one is gone
      // (recall scans vec0 for the length of the build).
      if (previous && !again && result.neededBytes !== undefined && result.neededBytes <= this.limitBytes - this.bytes + freed) {
        await this.refreshNow(namespace, reason, true);
      }
      return;
    }
    if (previous && previous.handle.id === result.handle.id) {
      previous.handle = result.handle; // appended: the same memory, a later watermark
      return;
    }
    if (previous) this.drop(namespace);
    this.builds++;
    // Room for it: the least recently recalled droppable others go (they scan vec0 until built again).
    for (const other of droppable) {
      if (this.bytes + result.bytes <= this.limitBytes) break;
      const { bytes } = this.held.get(other)!;
      this.drop(other);
      this.asked.set(other, this.now());
      this.log.info({ namespace: other, mib: Math.round(bytes / 2 ** 20) }, 'vector codes dropped to make room');
    }
    if (this.bytes + result.bytes > this.limitBytes) {
      retire(result.handle); // the room went meanwhile (a store still lent): built again when asked
      return;
    }
    this.held.set(namespace, { handle: result.handle, bytes: result.bytes, lent: 0, recalledAt: reason === 'recall' ? this.now() : previous?.recalledAt ?? 0 });
    this.peakBytes = Math.max(this.peakBytes, this.bytes);
    this.log.info({ namespace, vectors: result.vectors, mib: Math.round(result.bytes / 2 ** 20), heldMib: Math.round(this.bytes / 2 ** 20) }, 'vector codes built');
  }
}

/** Marks a store replaced or dropped (a reader that attaches to it anyway can tell). */
function retire(handle: SharedCodesHandle): void {
  Atomics.store(new Int32Array(handle.memory.buffer, 0, SHARED_CODES_RETIRED + 1), SHARED_CODES_RETIRED, 1);
}
