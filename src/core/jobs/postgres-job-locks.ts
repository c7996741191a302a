// Background jobs cluster-wide over PostgreSQL: one runner per job and namespace, chosen by
// session-level advisory locks, pg_try_advisory_lock(class, namespace id) — PG_LOCK_CLASS in
// shared/postgres-schema.ts. PostgreSQL releases a session's locks when the session ends, so a
// node that dies (kill -9, crash, lost network) lets another take its jobs over at that node's
// next try (every CLUSTER_POLL_MS).
//
// Where the session lives: a connection of its own, on the main thread (which runs the jobs),
// not the writer's. The writer's one connection runs every flush, reruns a failed flush with
// savepoints (a lock taken there could be taken twice) and is recycled by the client after its
// max_lifetime (30–60 min), dropping any session lock with it; the jobs would also need a writer
// round trip for each check. This connection never expires and runs nothing else. Every hold()
// asks pg_locks whether THIS session holds the lock, so a loss is seen at the next step of the
// job, and the lock is taken again only if no other node took it in between.
//
// A lost network, bounded on both sides:
//   - the server ends the session (and frees its locks) once its TCP keepalive probes go
//     unanswered for KEEPALIVE.idle + interval × count seconds, or once data it sent stays
//     unacknowledged for tcp_user_timeout — set per session in the start-up packet, since the
//     server's own default is the OS's (two hours and more on Linux) and an idle lock session
//     would hold its locks that long, every other node's jobs waiting behind it;
//   - this node: each lock query is given QUERY_TIMEOUT_MS. A cut session or a query past that
//     is a lost session: the client is thrown away and a new one connects. Not reused: a query
//     issued on the `postgres` client between a reset socket's 'error' and its 'close' is never
//     answered (measured with 3.4.9: it waits forever), so the old client cannot be trusted.
import postgres from 'postgres';
import { ReplaceableSql } from '../../shared/replaceable-sql.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { fail } from '../../shared/errors.js';
import { isConnectionFailure } from '../../shared/postgres-errors.js';
import { PG_LOCK_CLASS } from '../../shared/postgres-schema.js';
import type { JobLocks, JobName } from './job-locks.js';
import { BoundedMap } from '../../shared/bounded-map.js';

/** How often a run waiting for another node's run tries the lock again. */
const WAIT_MS = 200;
/** Longest a lock query may take before the session counts as lost. */
const QUERY_TIMEOUT_MS = 10_000;
/** Seconds: the server drops a silent peer after idle + interval × count = 25 s. */
export const KEEPALIVE = { idle: 10, interval: 5, count: 3 } as const;

type LockSql = postgres.Sql;

/** The session's settings: its name in pg_stat_activity, and the server-side dead-peer bounds above. */
function connect(url: string): LockSql {
  // Replaceable: a connection the client spoils in a failover is replaced (shared/postgres-client-guard.ts).
  return new ReplaceableSql((onclose) => postgres(url, {
    max: 1,
    onclose,
    // 0: never recycled or closed for idleness (either would drop the locks).
    max_lifetime: 0,
    idle_timeout: 0,
    // This side's probes of an idle socket (Node sets only the first probe's delay).
    keep_alive: KEEPALIVE.idle,
    onnotice: () => {},
    connection: {
      application_name: 'memory-runtime jobs',
      tcp_keepalives_idle: KEEPALIVE.idle,
      tcp_keepalives_interval: KEEPALIVE.interval,
      tcp_keepalives_count: KEEPALIVE.count,
      // Milliseconds data the server sent may stay unacknowledged (a lock reply into a dead network).
      tcp_user_timeout: (KEEPALIVE.idle + KEEPALIVE.interval * KEEPALIVE.count) * 1000,
    },
  })).sql;
}

export class PostgresJobLocks implements JobLocks {
  readonly clustered = true;
  private sql: LockSql;
  private closed = false;
  /** stopWaiting() was called: waits for another holder end (the service is stopping). */
  private waitsStopped = false;
  /** Wakes the waits sleeping between tries when stopWaiting() is called. */
  private readonly wake = new AbortController();
  /** Namespace ids by name, for the run locks of whileHolding (ids never change). */
  private readonly namespaceIds = new BoundedMap<string, number>(1_024);

  constructor(private readonly url: string, private readonly namespaceId: number) {
    this.sql = connect(url);
  }

  async hold(job: JobName): Promise<boolean> {
    return this.holdKey(job, this.namespaceId);
  }

  private async holdKey(job: JobName, key: number): Promise<boolean> {
    if (this.closed) return false;
    try {
      return await this.check(job, key);
    } catch (error) {
      // The session was cut (or went silent): a new client, a new session that holds nothing.
      // Any other failure is the job's (logged, retried).
      if (!isConnectionLost(error)) throw error;
      // Lost because close() ended the client: a new session now would never be ended.
      if (this.closed) return false;
      this.reconnect();
      return this.check(job, key);
    }
  }

  /**
   * The second lock key of a run in `namespace`: its id (a run of one namespace never waits for
   * another's); 0 for a namespace not written yet, which has nothing to run over.
   */
  private async keyOf(namespace: string | undefined): Promise<number> {
    if (namespace === undefined) return this.namespaceId;
    const known = this.namespaceIds.get(namespace);
    if (known !== undefined) return known;
    const [row] = await this.bounded(this.sql<{ id: number }[]>`SELECT id FROM namespaces WHERE name = ${namespace}`);
    // Only found ids are kept: a namespace created later gets its own key then.
    if (row) this.namespaceIds.set(namespace, row.id);
    return row?.id ?? 0;
  }

  private async check(job: JobName, key: number): Promise<boolean> {
    const lockClass = PG_LOCK_CLASS[job];
    // Two-key advisory locks show in pg_locks as classid = key 1, objid = key 2, objsubid = 2.
    // Held already: not taken again (session locks stack, and one unlock must free it).
    const [row] = await this.bounded(this.sql<{ held: boolean }[]>`SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_locks
        WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
          AND classid::bigint = ${lockClass} AND objid::bigint = ${key} AND objsubid = 2)
      THEN true ELSE pg_try_advisory_lock(${lockClass}::int, ${key}::int) END AS held`);
    return row!.held;
  }

  async whileHolding<T>(job: JobName, work: () => Promise<T>, signal?: AbortSignal, namespace?: string): Promise<T> {
    const stop = () => {
      if (this.waitsStopped || this.closed) throw fail.shuttingDown();
      if (signal?.aborted) throw signal.reason;
    };
    stop();
    const key = await this.keyOf(namespace);
    while (!(await this.holdKey(job, key))) {
      stop();
      // Woken early by an abort (caller gave up, service stopping): stop() below says which.
      await sleep(WAIT_MS, undefined, { signal: signal ? AbortSignal.any([signal, this.wake.signal]) : this.wake.signal }).catch(() => {});
      stop();
    }
    try {
      return await work();
    } finally {
      // A lost session freed the lock already; nothing to wait for then.
      await this.bounded(this.sql`SELECT pg_advisory_unlock(${PG_LOCK_CLASS[job]}::int, ${key}::int)`).catch(() => {});
    }
  }

  stopWaiting(): void {
    this.waitsStopped = true;
    this.wake.abort();
  }

  async close(): Promise<void> {
    this.stopWaiting();
    this.closed = true;
    await this.sql.end({ timeout: 5 });
  }

  /** Drops the current client (its session, if the server still has one, ends with it). */
  private reconnect(): void {
    const old = this.sql;
    this.sql = connect(this.url);
    void old.end({ timeout: 0 }).catch(() => {});
  }

  /** The query's answer, or a lost-session error after QUERY_TIMEOUT_MS. */
  private bounded<T>(query: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`job lock query unanswered after ${QUERY_TIMEOUT_MS} ms`), { code: 'LOCK_QUERY_TIMEOUT' })), QUERY_TIMEOUT_MS);
    });
    return Promise.race([query, timeout]).finally(() => clearTimeout(timer));
  }
}

/**
 * The session is gone or unusable: a connection failure as recall and start-up see one
 * (shared/postgres-errors.ts), a query on the client close() ended, or a lock query left
 * unanswered (a silent network).
 */
function isConnectionLost(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return isConnectionFailure(error) || code === 'CONNECTION_ENDED' || code === 'LOCK_QUERY_TIMEOUT';
}
