// A `postgres` client that can be swapped for a new one under the code using it. The client
// object is what the adapters hold (a function with .begin, .reserve, .unsafe …); this hands
// them a stand-in that forwards every call to the current client, so replacing it changes no
// caller. Replaced: a client whose connection the guard saw spoiled (postgres-client-guard.ts),
// and the writer's client after any connection failure (a client keeps a growing reconnect
// backoff and the host it last used; a new one starts afresh from the first listed host).
// The old client is ended with a short drain: its queries in flight on sound connections
// finish, and a query stuck on the spoiled one is rejected (CONNECTION_DESTROYED).
import type postgres from 'postgres';
import { forgetClient, guardClient, type GuardedClient } from './postgres-client-guard.js';

/** How long an old client's queries in flight may finish before it is destroyed. */
const DRAIN_SECONDS = 1;

/** Makes a client; `onClose` must be passed on as the client's `onclose` option. */
export type OpenClient<S> = (onClose: () => void) => S;

export class ReplaceableSql<S extends postgres.Sql<any>> implements GuardedClient {
  /** What the adapters hold: every call goes to the current client. */
  readonly sql: S;
  /** Clients made so far (the first included). */
  generation = 1;
  private current: S;
  private lost = false;
  private ended = false;
  /** Called after a replacement (the owner drops what it knew of the old sessions). */
  onReplaced: (() => void) | null = null;

  /** `stateless`: its sessions hold nothing between queries (the guard may replace it unasked). */
  constructor(private readonly open: OpenClient<S>, private readonly onClose: () => void = () => {}, readonly stateless = false) {
    this.current = this.make();
    const self = this;
    this.sql = new Proxy(function stand() {} as unknown as S, {
      apply: (_target, _this, args: unknown[]) => (self.current as unknown as (...a: unknown[]) => unknown)(...args),
      get: (_target, property) => {
        if (property === 'end') return (options?: { timeout?: number }) => self.end(options);
        return (self.current as unknown as Record<PropertyKey, unknown>)[property];
      },
    });
    guardClient(this);
  }

  /** A connection of the current client closed since it was made. */
  get lostConnection(): boolean {
    return this.lost;
  }

  /** Ends the current client (drained briefly) and makes a new one in its place. */
  replace(_reason: string): void {
    if (this.ended) return;
    const old = this.current;
    this.current = this.make();
    this.generation++;
    try {
      old.end({ timeout: DRAIN_SECONDS }).catch(() => {});
    } finally {
      // The new client is in place whatever ending the old one threw.
      this.onReplaced?.();
    }
  }

  async end(options: { timeout?: number } = {}): Promise<void> {
    this.ended = true;
    forgetClient(this);
    await this.current.end(options);
  }

  private make(): S {
    this.lost = false;
    let client: S | null = null;
    client = this.open(() => {
      // A close of a client already replaced says nothing of the current one.
      if (client === this.current) this.lost = true;
      this.onClose();
    });
    return client;
  }
}
