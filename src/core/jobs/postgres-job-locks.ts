// Background jobs cluster-wide over PostgreSQL: one runner per job and namespace, chosen by
// session-level advisory locks, pg_try_advisory_lock(class, namespace id) — PG_LOCK_CLASS in
// shared/postgres-schema.ts. PostgreSQL releases a session's locks when the session ends, so a
// node that dies (kill -9, crash, lost network once TCP keepalive notices) lets another take its
// jobs over at that node's next try (every CLUSTER_POLL_MS).
//
// Where the session lives: a connection of its own, on the main thread (which runs the jobs),
// not the writer's. The writer's one connection runs every flush, reruns a failed flush with
// savepoints (a lock taken there could be taken twice) and is recycled by the client after its
// max_lifetime (30–60 min), dropping any session lock with it; the jobs would also need a writer
// round trip for each check. This connection never expires and runs nothing else. If it is cut
// anyway, the client reconnects on the next query to a new session holding nothing: every
// hold() asks pg_locks whether THIS session holds the lock, so a loss is seen at the next step of
// the job, and the lock is taken again only if no other node took it in between.
import postgres from 'postgres';
import { PG_LOCK_CLASS } from '../../shared/postgres-schema.js';
import type { JobLocks, JobName } from './job-locks.js';

/** How often a run waiting for another node's run tries the lock again. */
const WAIT_MS = 200;

export class PostgresJobLocks implements JobLocks {
  readonly clustered = true;
  private readonly sql: postgres.Sql;
  private closed = false;

  constructor(url: string, private readonly namespaceId: number) {
    this.sql = postgres(url, {
      max: 1,
      // 0: never recycled or closed for idleness (either would drop the locks).
      max_lifetime: 0,
      idle_timeout: 0,
      onnotice: () => {},
      connection: { application_name: 'memory-runtime jobs' },
    });
  }

  async hold(job: JobName): Promise<boolean> {
    if (this.closed) return false;
    try {
      return await this.check(job);
    } catch (error) {
      // The session was cut since the last query: the client reconnects for the next one, to a
      // new session that holds nothing. Any other failure is the job's (logged, retried).
      if (!isConnectionLost(error)) throw error;
      return this.check(job);
    }
  }

  private async check(job: JobName): Promise<boolean> {
    const lockClass = PG_LOCK_CLASS[job];
    // Two-key advisory locks show in pg_locks as classid = key 1, objid = key 2, objsubid = 2.
    // Held already: not taken again (session locks stack, and one unlock must free it).
    const [row] = await this.sql<{ held: boolean }[]>`SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_locks
        WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
          AND classid::bigint = ${lockClass} AND objid::bigint = ${this.namespaceId} AND objsubid = 2)
      THEN true ELSE pg_try_advisory_lock(${lockClass}::int, ${this.namespaceId}::int) END AS held`;
    return row!.held;
  }

  async whileHolding<T>(job: JobName, work: () => Promise<T>): Promise<T> {
    while (!(await this.hold(job))) {
      if (this.closed) throw new Error('the service is closing');
      await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
    }
    try {
      return await work();
    } finally {
      await this.sql`SELECT pg_advisory_unlock(${PG_LOCK_CLASS[job]}::int, ${this.namespaceId}::int)`.catch(() => {});
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.sql.end({ timeout: 5 });
  }
}

/** Errors of a session that ended under the client (its code, the socket's, PostgreSQL's admin_shutdown). */
function isConnectionLost(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && ['CONNECTION_CLOSED', 'ECONNRESET', 'EPIPE', '57P01'].includes(code);
}
