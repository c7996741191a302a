// The writer's hold on the primary through a failover. A flush runs only on a connection that
// answered pg_is_in_recovery() = false since it was opened: target_session_attrs=primary is the
// client's own check and was seen to land on a standby, and a standby refuses every write. When
// the connection is lost (the primary died, a read-only refusal) the client is replaced — a new
// one tries the listed hosts from the first again, without the old one's reconnect backoff —
// and writes wait at most SERVICE_DATABASE_WRITE_WAIT_MS for a primary, then answer 503
// DATABASE_UNAVAILABLE (Retry-After). Meanwhile the primary is looked for in the background
// every RETRY_MS, so writes resume within that of a promotion even with no write waiting, and
// the main thread is told when the database goes away and comes back (/v1/health).
import { setTimeout as sleep } from 'node:timers/promises';
import { fail } from '../../shared/errors.js';
import { failureCause, isConnectionFailure, isReadOnlyServer } from '../../shared/postgres-errors.js';
import { startingAtHost } from '../../shared/postgres-url.js';
import { ReplaceableSql } from '../../shared/replaceable-sql.js';
import { connectWriter, type Sql } from './connect.js';

/** Pause between looks for the primary while it is missing. */
const RETRY_MS = 100;
/**
 * Longest one look waits for an answer. The client, given several hosts, keeps cycling through
 * them with a growing backoff while none is a primary; a new client after this long tries them
 * afresh, so a promotion is found within about this much.
 */
const LOOK_MS = 1_000;

/** The database went away (with why) or came back. */
export type DatabaseState = (available: boolean, cause?: string) => void;

/** A failure that means this connection cannot write: lost, or to a standby. */
export function lostPrimary(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (isConnectionFailure(e) || isReadOnlyServer(e)) return true;
  }
  return false;
}

export class PrimaryConnection {
  private readonly client: ReplaceableSql<Sql>;
  /** The current connection answered that it is the primary, and has not closed since. */
  private checked = false;
  private available = true;
  /** When a flush first found no checked primary (null while there is one). */
  private missingSince: number | null = null;
  /** The one look in progress (flushes and the background search share it). */
  private looking: Promise<string | null> | null = null;
  private searching = false;
  private closed = false;

  /** Clients made: each new one starts at the next listed host (a standby first in the list is passed over). */
  private opened = 0;

  constructor(url: string, private readonly waitMs: number, onClose: () => void, private readonly onState: DatabaseState = () => {}) {
    this.client = new ReplaceableSql((onclose) => connectWriter(startingAtHost(url, this.opened++), onclose), () => {
      this.checked = false;
      onClose();
    });
    this.client.onReplaced = onClose;
  }

  /** What the store runs its statements on (the current client, whichever it is). */
  get sql(): Sql {
    return this.client.sql;
  }

  /**
   * Resolves once the connection is to a primary; throws DATABASE_UNAVAILABLE without one. The
   * wait is waitMs from when the primary was found missing, not from each flush: flushes queued
   * behind a waiting one do not wait again; past it, a flush waits RETRY_MS on the look in
   * progress. A flush only waits on a look, never shortens it: a look cut to a flush's remaining
   * wait (100 ms) is shorter than a new connection takes on a loaded server, and since a look
   * that runs out replaces the client, writes retrying back to back kept every connection from
   * getting far enough to be checked (a drill node wrote nothing for 10 s after the promotion).
   */
  async ready(): Promise<void> {
    if (this.checked) return;
    const deadline = Math.max((this.missingSince ?? performance.now()) + this.waitMs, performance.now() + RETRY_MS);
    this.missingSince ??= performance.now();
    for (;;) {
      const cause = await this.waitForLook(deadline - performance.now());
      if (cause === null) return;
      if (performance.now() + RETRY_MS >= deadline) {
        this.wentAway(cause);
        throw fail.databaseUnavailable();
      }
      await sleep(RETRY_MS);
    }
  }

  /** A flush lost the connection or met a standby: the next one starts on a new, checked connection. */
  lost(error: unknown): void {
    this.checked = false;
    this.missingSince ??= performance.now();
    this.client.replace(failureCause(error));
    this.wentAway(failureCause(error));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client.end({ timeout: 5 });
  }

  /** The look in progress (one is started if none is), waited for at most `ms`: null when the connection is to a primary, else why not (yet). */
  private async waitForLook(ms: number): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<string>((resolve) => { timer = setTimeout(resolve, Math.max(ms, 1), `no primary found within ${Math.round(ms)} ms`); });
    try {
      return await Promise.race([this.lookOnce(), waited]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One check of the current connection (opening it if needed) within LOOK_MS: null when it is a primary, else why not. */
  private lookOnce(): Promise<string | null> {
    this.looking ??= this.check(LOOK_MS).finally(() => { this.looking = null; });
    return this.looking;
  }

  private async check(ms: number): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const asked = this.client.sql<{ standby: boolean }[]>`SELECT pg_is_in_recovery() AS standby`;
    const timedOut = new Promise<'timeout'>((resolve) => { timer = setTimeout(resolve, ms, 'timeout'); });
    let cause: string;
    try {
      const answer = await Promise.race([asked, timedOut]);
      if (answer !== 'timeout' && !answer[0]!.standby) {
        this.checked = true;
        this.missingSince = null;
        this.cameBack();
        return null;
      }
      cause = answer === 'timeout' ? `no answer within ${Math.round(ms)} ms` : 'the server is a standby (in recovery)';
    } catch (error) {
      if (!isConnectionFailure(error)) throw error;
      cause = failureCause(error);
    } finally {
      clearTimeout(timer);
    }
    asked.catch(() => {});
    // A new client: the old one may be stuck connecting, backing off, or on the standby.
    this.client.replace(cause);
    return cause;
  }

  private wentAway(cause: string): void {
    if (this.available) {
      this.available = false;
      this.onState(false, cause);
    }
    void this.search();
  }

  private cameBack(): void {
    if (this.available) return;
    this.available = true;
    this.onState(true);
  }

  /** Looks for the primary in the background until one answers, so writes resume without waiting for one. */
  private async search(): Promise<void> {
    if (this.searching) return;
    this.searching = true;
    try {
      while (!this.closed && !this.available) {
        if (this.checked) {
          this.cameBack();
          break;
        }
        await this.lookOnce().catch(() => {});
        if (!this.checked) await sleep(RETRY_MS);
      }
    } finally {
      this.searching = false;
    }
  }
}
