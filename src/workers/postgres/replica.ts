// Read-your-writes over streaming replicas. Recall reads a replica (a prefer-standby connection)
// unless it carries a WAL position — the position the writer returned for the client's last
// write — that the replica has not replayed yet: then it waits up to maxLagMs for replay to pass
// it, and past that reads the primary. Replay only moves forward, and the snapshot is taken after
// the check, so a snapshot on a replica that had reached the position holds every write before it.
import type { ReservedSql as Reserved } from 'postgres';
import type { ReadSide } from '../../shared/messages.js';
import type { Sql, Tx } from './client.js';

type ReservedSql = Reserved<{ bigint: number }>;

export interface ReplicaOptions {
  /** Connections to the replicas (e.g. several hosts with target_session_attrs=prefer-standby). */
  sql: Sql;
  /** Longest a recall waits for the replica to replay past its position before reading the primary. */
  maxLagMs: number;
}

/** How often a waiting recall asks the replica again. */
const POLL_MS = 2;

export class ReadSource {
  /** Snapshots served by each side (tests and metrics). */
  readonly served = { replica: 0, primary: 0 };

  constructor(private readonly primary: Sql, private readonly replica: ReplicaOptions | null) {}

  /**
   * Runs `work` in one read-only snapshot that sees `after` (a pg_lsn, e.g. '0/16B3748'). On a
   * replica URL naming several hosts, every query may go to another host: so one connection is
   * reserved, replay is checked on it, and the snapshot is begun on that same connection.
   */
  async snapshot<T>(after: string | undefined, work: (tx: Tx) => Promise<T>, onServed?: (side: ReadSide) => void): Promise<T> {
    if (this.replica) {
      const connection = await this.replica.sql.reserve();
      try {
        if (after === undefined || (await this.waitForReplay(connection, after))) {
          this.served.replica++;
          onServed?.('replica');
          return await snapshotOn(connection, work);
        }
      } finally {
        connection.release();
      }
    }
    if (this.replica) {
      this.served.primary++;
      onServed?.('primary');
    }
    return this.primary.begin(SNAPSHOT, work) as Promise<T>;
  }

  /** Whether this connection's server replays past `after` within maxLagMs. */
  private async waitForReplay(connection: ReservedSql, after: string): Promise<boolean> {
    const deadline = performance.now() + this.replica!.maxLagMs;
    while (!(await replayed(connection, after))) {
      if (performance.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(0, deadline - performance.now()))));
    }
    return true;
  }
}

const SNAPSHOT = 'ISOLATION LEVEL REPEATABLE READ READ ONLY';

/** Whether the server has replayed past the position (a primary behind the replica URL always has: NULL there). */
async function replayed(connection: ReservedSql, after: string): Promise<boolean> {
  const [{ caught }] = await connection<{ caught: boolean }[]>`SELECT coalesce(pg_last_wal_replay_lsn() >= ${after}::pg_lsn, true) AS caught`;
  return caught;
}

/** sql.begin() would take any pooled connection: the transaction is run by hand on the reserved one. */
async function snapshotOn<T>(connection: ReservedSql, work: (tx: Tx) => Promise<T>): Promise<T> {
  await connection.unsafe(`BEGIN ${SNAPSHOT}`);
  try {
    const result = await work(connection as unknown as Tx); // the same query interface; no savepoints are taken
    await connection.unsafe('COMMIT');
    return result;
  } catch (error) {
    await connection.unsafe('ROLLBACK').catch(() => {});
    throw error;
  }
}
