// One at a time per key, in arrival order, with a bounded queue: what a delete and a restore of
// the same entity need (both work in many writer commands; interleaved, a DELETE answered 200
// while most of the entity came back), and what restores need among themselves (one snapshot
// read at a time bounds the memory a restore holds). A caller past the queue's bound is refused
// at once rather than left waiting behind an unbounded line.
import { fail, type ServiceError } from '../shared/errors.js';

export class TakeTurns {
  /** Per key: the callbacks that start each waiting turn, in arrival order (present = one running). */
  private readonly queues = new Map<string, (() => void)[]>();

  constructor(private readonly maxWaiting: number, private readonly refuse: (key: string) => ServiceError) {}

  /** Runs `work` once every earlier turn for `key` has ended; throws `refuse(key)` when too many wait. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    let waiting = this.queues.get(key);
    if (!waiting) {
      waiting = [];
      this.queues.set(key, waiting);
    } else {
      if (waiting.length >= this.maxWaiting) throw this.refuse(key);
      await new Promise<void>((start) => waiting!.push(start));
    }
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else this.queues.delete(key);
    }
  }
}

/** Turns that may wait behind a running one before the next caller is refused (409). */
export const MAX_WAITING_TURNS = 4;

/**
 * Deletes and restores of one entity (namespace + name) take turns: each sees the entity as the
 * one before it left it, so a DELETE sent during a restore deletes everything the restore put back.
 */
export class EntityTurns {
  private readonly turns: TakeTurns;

  constructor(private readonly namespace: string) {
    this.turns = new TakeTurns(MAX_WAITING_TURNS, (key) => fail.entityBusy(key.slice(key.indexOf('\u0000') + 1), MAX_WAITING_TURNS));
  }

  run<T>(entity: string, work: () => Promise<T>): Promise<T> {
    return this.turns.run(`${this.namespace}\u0000${entity}`, work);
  }
}
