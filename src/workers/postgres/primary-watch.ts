// A pool thread's view of whether the primary answers, so that reads go on from the replicas
// while it does not (a failover: the primary died and no standby has been promoted yet). Any
// close of a primary connection starts a look: `SELECT 1` within the connect bound. A connection
// failure marks the primary down and it is asked again every RETRY_MS until it answers. While
// it is down, the reads that go to the primary (entities named in a query, the vector index,
// recall snapshots) are served by the replica URL instead, and the recall says so.
import { failureCause, isConnectionFailure } from '../../shared/postgres-errors.js';
import type { Sql } from './client.js';

/** Pause between looks at a primary that is down. */
const RETRY_MS = 250;

export class PrimaryWatch {
  /** Why the primary is down (null: it answers, as far as this thread knows). */
  down: string | null = null;
  private looking = false;
  private closed = false;

  /** `onDown`: the primary was found gone (its client is replaced: queries stuck in it fail now). */
  constructor(private readonly primary: Sql, private readonly connectMs: number, private readonly onDown: () => void = () => {}) {}

  /** A primary connection closed, or a read on it failed for want of a connection. */
  suspect(error?: unknown): void {
    if (error !== undefined && isConnectionFailure(error)) this.markDown(failureCause(error));
    void this.look();
  }

  private markDown(cause: string): void {
    const wasUp = this.down === null;
    this.down = cause;
    if (wasUp) this.onDown();
  }

  close(): void {
    this.closed = true;
  }

  private async look(): Promise<void> {
    if (this.looking || this.closed) return;
    this.looking = true;
    try {
      for (;;) {
        const cause = await this.ask();
        if (cause === null) this.down = null;
        else this.markDown(cause);
        if (cause === null || this.closed) return;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
      }
    } finally {
      this.looking = false;
    }
  }

  /** null when the primary answers within the bound, else why not. */
  private ask(): Promise<string | null> {
    return answersWithin(this.primary, this.connectMs);
  }
}

/** null when the server behind `sql` answers `SELECT 1` within `ms`, else why not. */
export async function answersWithin(sql: Sql, ms: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const asked = sql`SELECT 1`;
  asked.catch(() => {});
  try {
    const answer = await Promise.race([asked, new Promise<'timeout'>((resolve) => { timer = setTimeout(resolve, ms, 'timeout'); })]);
    return answer === 'timeout' ? `no answer within ${ms} ms` : null;
  } catch (error) {
    if (isConnectionFailure(error)) return failureCause(error);
    return null; // the server answered, with an error of the statement's own
  } finally {
    clearTimeout(timer);
  }
}

/** A client that is the primary while it answers and the replicas while it does not. */
export function primaryOrReplica(primary: Sql, replica: Sql, watch: PrimaryWatch): Sql {
  const current = () => (watch.down === null ? primary : replica);
  return new Proxy(function stand() {} as unknown as Sql, {
    apply: (_target, _this, args: unknown[]) => (current() as unknown as (...a: unknown[]) => unknown)(...args),
    get: (_target, property) => (current() as unknown as Record<PropertyKey, unknown>)[property],
  });
}
