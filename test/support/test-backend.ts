// Which storage backend startTestService runs a service on, from the test process's env. Unset:
// the embedded SQLite file in a temp folder, as always. TEST_BACKEND=postgres (set by
// scripts/test-postgres.mjs, which owns the clusters): a fresh database per service on the
// primary at TEST_POSTGRES_URL, recall read from the streaming replica at TEST_POSTGRES_READ_URL,
// so the same HTTP tests run unchanged against both backends and never see each other's rows.
import postgres from 'postgres';

export const onPostgres = process.env.TEST_BACKEND === 'postgres';

let databases = 0;
/** How long a new database may take to reach the replica before the test fails. */
const REPLAY_WAIT_MS = 60_000;

/** A database's URL on the server `url` names (the path is the database; query options kept). */
function withDatabase(url: string, name: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^/?]+)(\/[^?]*)?/i, `$1/${name}`);
}

/** SERVICE_DATABASE_URL (+ SERVICE_READ_DATABASE_URL) of a new, empty database; {} on SQLite. */
export async function backendEnv(): Promise<Record<string, string>> {
  if (!onPostgres) return {};
  const url = process.env.TEST_POSTGRES_URL;
  if (!url) throw new Error('TEST_BACKEND=postgres needs TEST_POSTGRES_URL (run the suite through scripts/test-postgres.mjs)');
  // Unique across the test processes that share the cluster (node --test runs files in parallel).
  return createDatabase(url, process.env.TEST_POSTGRES_READ_URL, `svc_${process.pid}_${++databases}`);
}

/**
 * Creates database `name` on the primary `url` and returns the service env for it (the replica's
 * URL too, once the replica has the database).
 */
export async function createDatabase(url: string, readUrl: string | undefined, name: string): Promise<Record<string, string>> {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
    if (readUrl) await replayedOnReplica(admin, readUrl);
  } finally {
    await admin.end();
  }
  const env: Record<string, string> = { SERVICE_DATABASE_URL: withDatabase(url, name) };
  if (readUrl) env.SERVICE_READ_DATABASE_URL = withDatabase(readUrl, name);
  return env;
}

/**
 * Waits until the replica has replayed the CREATE DATABASE: until then the pool threads could not
 * connect to it there, and a recall would always fall back to the primary.
 */
async function replayedOnReplica(primary: postgres.Sql, readUrl: string): Promise<void> {
  const [{ lsn }] = await primary`SELECT pg_current_wal_lsn()::text AS lsn`;
  const replica = postgres(readUrl, { max: 1, onnotice: () => {} });
  try {
    // A hang, not slowness: the files of a run share one replica, on a box that may be loaded.
    const deadline = Date.now() + REPLAY_WAIT_MS;
    for (;;) {
      const [{ done }] = await replica`SELECT pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn AS done`;
      if (done) return;
      if (Date.now() > deadline) throw new Error(`the replica did not replay ${lsn} within ${REPLAY_WAIT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    await replica.end();
  }
}

