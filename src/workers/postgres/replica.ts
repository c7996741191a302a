// Read-your-writes over streaming replicas. Recall reads a replica (a prefer-standby connection)
// unless it carries a WAL position — the position the writer returned for the client's last
// write — that the replica has not replayed yet: then it waits up to maxLagMs for replay to pass
// it, and past that reads the primary. Replay only moves forward, and the snapshot is taken after
// the check, so a snapshot on a replica that had reached the position holds every write before it.
// A position the primary itself has not flushed (garbage such as FFFFFFFF/FFFFFFFF, one from
// another cluster or from before a failover) no replica will reach: waiting for it would cost
// every such recall the whole maxLagMs, so it reads the primary at once (the primary holds every
// committed write, whatever the position claims).
// A replica that cannot be reached (refused, cut, not answering within connectMs) is not the
// recall's failure: the primary serves it, and for REPLICA_RETRY_MS after such a failure every
// recall goes straight to the primary rather than waiting on the replica again. A read on a
// replica connection is bounded too (maxLagMs for replay plus connectMs): a connection killed
// under it can leave the client with a query that never settles (its socket gone, the write
// never sent, no error), so past the bound — or when the connection dies — the replica client
// is replaced (the hung query then fails) and the primary serves the recall.
// A snapshot on the primary is bounded too (primary-bound.ts): past the bound, a primary that
// does not answer a new connection has the read abandoned; the replicas serve it, or without
// them the recall answers 503 DATABASE_UNAVAILABLE.
// A replica that cancels the snapshot on a recovery conflict (replay removed row versions the
// snapshot could still see, or took a lock it held, and max_standby_streaming_delay ran out) is
// healthy: the primary serves that one recall, and the next one tries the replica again.
import type { ReservedSql as Reserved } from 'postgres';
import { failureCause, isConnectionFailure, isRecoveryConflict } from '../../shared/postgres-errors.js';
import { REPLICA_CONNECT_MS } from '../../shared/postgres-url.js';
import { READ_PRIMARY } from '../../shared/wal-position.js';
import type { OnServed } from '../port/read-port.js';
import type { Sql, Tx } from './client.js';
import type { PrimaryWatch } from './primary-watch.js';
import { withinPrimaryBound, type PrimaryCheck } from './primary-bound.js';

type ReservedSql = Reserved<{ bigint: number }>;

export interface ReplicaOptions {
  /** Connections to the replicas (e.g. several hosts with target_session_attrs=prefer-standby). */
  sql: Sql;
  /** Longest a recall waits for the replica to replay past its position before reading the primary. */
  maxLagMs: number;
  /** Longest a recall waits for a replica connection before reading the primary (default REPLICA_CONNECT_MS). */
  connectMs?: number;
  /** Ends the replica client and makes a new one (its queries in flight fail); absent: not replaceable. */
  replace?: (reason: string) => void;
}

/** How often a waiting recall asks the replica again. */
const POLL_MS = 2;
/** After a replica failure, recalls read the primary this long before the replica is tried again. */
const REPLICA_RETRY_MS = 2_000;
/** A pool thread reports a failing replica at most this often. */
const WARN_EVERY_MS = 60_000;

export class ReadSource {
  /** Snapshots served by each side (tests and metrics). */
  readonly served = { replica: 0, primary: 0 };
  /** Replica snapshots cancelled by a recovery conflict, each then served by the primary (tests). */
  recoveryConflicts = 0;
  /** Replica reads abandoned at their time bound (tests, logs). */
  replicaTimeouts = 0;
  /** Until when (performance.now()) recalls skip a replica that just failed. */
  private replicaDownUntil = 0;
  private nextWarningAt = 0;
  /** A failure not yet reported (it goes with the next primary snapshot's onServed). */
  private unreported: string | undefined;

  constructor(
    private readonly primary: Sql,
    private readonly replica: ReplicaOptions | null,
    private readonly watch: PrimaryWatch | null = null,
    private readonly primaryCheck: PrimaryCheck | null = null,
  ) {}

  /**
   * Runs `work` in one read-only snapshot that sees `after` (a pg_lsn, e.g. '0/16B3748'; READ_PRIMARY:
   * a write whose position is unknown, so only the primary is sure to hold it). On a replica URL
   * naming several hosts, every query may go to another host: so one connection is reserved,
   * replay is checked on it, and the snapshot is begun on that same connection. `work`
   * only reads, in its own snapshot, and what it returns is built from those reads alone: so
   * after a replica failure or a recovery conflict part-way it runs again, whole, on the primary,
   * and the answer is the primary's as if the replica had never been asked.
   */
  async snapshot<T>(after: string | undefined, work: (tx: Tx) => Promise<T>, onServed?: OnServed): Promise<T> {
    const primaryDown = this.watch?.down;
    if (this.replica && primaryDown) {
      const served = await this.withoutPrimary(this.replica, work, primaryDown, onServed);
      if (served) return served.value;
    }
    let recoveryConflict = false;
    if (this.replica && after !== READ_PRIMARY && performance.now() >= this.replicaDownUntil) {
      const done = await this.onReplica(this.replica, after, work);
      if (done === RECOVERY_CONFLICT) {
        recoveryConflict = true;
        this.recoveryConflicts++;
      } else if (done) {
        this.served.replica++;
        onServed?.('replica');
        return done.value;
      }
    }
    if (this.replica) {
      this.served.primary++;
      const replicaFailure = this.unreported;
      this.unreported = undefined;
      onServed?.('primary', {
        ...(replicaFailure ? { replicaFailure } : {}),
        ...(recoveryConflict ? { recoveryConflict } : {}),
      });
    }
    try {
      return await withinPrimaryBound(this.primary.begin(SNAPSHOT, work) as Promise<T>, this.primaryCheck);
    } catch (error) {
      if (!this.replica || !isConnectionFailure(error)) throw error;
      this.watch?.suspect(error);
      const served = await this.withoutPrimary(this.replica, work, failureCause(error), onServed);
      if (!served) throw error;
      return served.value;
    }
  }

  /**
   * The primary does not answer (a failover): the replica serves what it has replayed, whatever
   * position the recall asked for — the writes it may lack cannot be read anywhere now — and the
   * recall reports that the primary could not be read. null when the replica fails too.
   */
  private async withoutPrimary<T>(replica: ReplicaOptions, work: (tx: Tx) => Promise<T>, cause: string, onServed?: OnServed): Promise<{ value: T } | null> {
    const done = await this.onReplica(replica, undefined, work).catch(() => null);
    if (!done || done === RECOVERY_CONFLICT) return null;
    this.served.replica++;
    onServed?.('replica', { primaryFailure: cause });
    return done;
  }

  /**
   * `work`'s result on the replica; null when the replica is behind `after` or failed;
   * RECOVERY_CONFLICT when the replica cancelled the snapshot so that replay could go on.
   */
  private async onReplica<T>(replica: ReplicaOptions, after: string | undefined, work: (tx: Tx) => Promise<T>): Promise<{ value: T } | typeof RECOVERY_CONFLICT | null> {
    const connectMs = replica.connectMs ?? REPLICA_CONNECT_MS;
    let connection: ReservedSql;
    try {
      connection = await reserveWithin(replica.sql, connectMs);
    } catch (error) {
      return this.replicaFailed(error);
    }
    const reading = this.readOn(connection, after, work);
    const boundMs = replica.maxLagMs + connectMs;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<typeof TIMED_OUT>((resolve) => { timer = setTimeout(resolve, boundMs, TIMED_OUT); });
    try {
      const outcome = await Promise.race([reading, timedOut]);
      if (outcome !== TIMED_OUT) return outcome;
    } finally {
      clearTimeout(timer);
    }
    // The read is abandoned: whatever it ends with later (the replaced client fails it) is dropped.
    reading.catch(() => {});
    this.replicaTimeouts++;
    return this.replicaFailed(Object.assign(new Error(`no replica answer within ${boundMs} ms`), { code: 'CONNECT_TIMEOUT' }));
  }

  /** `work` on a reserved replica connection, released after. */
  private async readOn<T>(connection: ReservedSql, after: string | undefined, work: (tx: Tx) => Promise<T>): Promise<{ value: T } | typeof RECOVERY_CONFLICT | null> {
    try {
      if (after !== undefined && !(await this.waitForReplay(connection, after))) return null;
      return { value: await snapshotOn(connection, work) };
    } catch (error) {
      // Not a failure of the replica: it stays in use (not skipped for REPLICA_RETRY_MS).
      if (isRecoveryConflict(error)) return RECOVERY_CONFLICT;
      return this.replicaFailed(error);
    } finally {
      connection.release();
    }
  }

  /** A connection failure: read the primary for a while, and report it if not reported lately. Anything else is thrown. */
  private replicaFailed(error: unknown): null {
    if (!isConnectionFailure(error)) throw error;
    const now = performance.now();
    // A new client once per failure, not once per recall that met it: the recalls still on the
    // old client fail over to the primary while the replica is skipped.
    if (now >= this.replicaDownUntil) this.replica?.replace?.(failureCause(error));
    this.replicaDownUntil = now + REPLICA_RETRY_MS;
    if (now >= this.nextWarningAt) {
      this.nextWarningAt = now + WARN_EVERY_MS;
      this.unreported = failureCause(error);
    }
    return null;
  }

  /**
   * Whether this connection's server replays past `after` within maxLagMs. Not there on the first
   * check: the primary is asked once whether it has flushed `after` at all, and if not, there
   * is nothing to wait for.
   */
  private async waitForReplay(connection: ReservedSql, after: string): Promise<boolean> {
    const deadline = performance.now() + this.replica!.maxLagMs;
    if (await replayed(connection, after)) return true;
    if (await beyondPrimary(this.primary, after)) return false;
    while (!(await replayed(connection, after))) {
      if (performance.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(0, deadline - performance.now()))));
    }
    return true;
  }
}

const SNAPSHOT = 'ISOLATION LEVEL REPEATABLE READ READ ONLY';
const RECOVERY_CONFLICT = 'recovery conflict';
const TIMED_OUT = Symbol('timed out');

/**
 * A reserved connection within `ms`. The client alone can wait far longer: on a server that
 * accepts and then closes or never answers it keeps reconnecting. One that arrives late is handed back.
 */
function reserveWithin(sql: Sql, ms: number): Promise<ReservedSql> {
  const reserving = sql.reserve() as Promise<ReservedSql>;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reserving.then((late) => late.release(), () => {});
      reject(Object.assign(new Error(`no replica connection within ${ms} ms`), { code: 'CONNECT_TIMEOUT' }));
    }, ms);
    reserving.then((connection) => {
      clearTimeout(timer);
      resolve(connection);
    }, (error: unknown) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/**
 * Whether the server has replayed past the position. A primary behind the replica URL always has,
 * including a standby promoted by a failover, whose pg_last_wal_replay_lsn() stays frozen at the
 * promotion until it restarts (so it is asked whether it is still in recovery first).
 */
async function replayed(connection: ReservedSql, after: string): Promise<boolean> {
  const [{ caught }] = await connection<{ caught: boolean }[]>`SELECT CASE WHEN pg_is_in_recovery()
    THEN coalesce(pg_last_wal_replay_lsn() >= ${after}::pg_lsn, false) ELSE true END AS caught`;
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

/**
 * Whether `after` is past what the primary has flushed, so no replica can ever replay it. A
 * primary that will not say (pg_current_wal_flush_lsn() not granted) is taken to have it: the
 * recall then waits for replay as before.
 */
async function beyondPrimary(primary: Sql, after: string): Promise<boolean> {
  try {
    const [{ beyond }] = await primary<{ beyond: boolean }[]>`SELECT ${after}::pg_lsn > pg_current_wal_flush_lsn() AS beyond`;
    return beyond;
  } catch {
    return false;
  }
}
