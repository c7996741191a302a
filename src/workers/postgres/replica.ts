// Read-your-writes over streaming replicas. Recall reads a replica (a prefer-standby connection)
// unless it carries a WAL position — the position the writer returned for the client's last
// write — that the replica has not replayed yet: then it waits up to maxLagMs for replay to pass
// it, and past that reads the primary. Replay only moves forward, and the snapshot is taken after
// the check, so a snapshot on a replica that had reached the position holds every write before it.
import type { Sql } from './client.js';

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

  /** Where a snapshot that must see `after` (a pg_lsn, e.g. '0/16B3748') is read. */
  async choose(after: string | undefined): Promise<Sql> {
    if (!this.replica) return this.primary;
    if (after === undefined || (await this.replayed(after))) return this.count('replica');
    const deadline = performance.now() + this.replica.maxLagMs;
    while (performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(0, deadline - performance.now()))));
      if (await this.replayed(after)) return this.count('replica');
    }
    return this.count('primary');
  }

  /** Whether the replica has replayed past the position (a primary behind the replica URL always has: NULL there). */
  private async replayed(after: string): Promise<boolean> {
    const [{ caught }] = await this.replica!.sql<{ caught: boolean }[]>`SELECT coalesce(pg_last_wal_replay_lsn() >= ${after}::pg_lsn, true) AS caught`;
    return caught;
  }

  private count(side: 'replica' | 'primary'): Sql {
    this.served[side]++;
    return side === 'replica' ? this.replica!.sql : this.primary;
  }
}
