// Start-up on PostgreSQL waits for the database a bounded time, then gives up with the reason. A
// node started before its database (a fleet booting, a failover in progress) should come up once
// the database answers; one pointed at a wrong host, password or database should say so and
// exit instead of hanging — the `postgres` client alone retries a connection the server keeps
// closing forever, and waits 30 s for one that never answers.
import postgres from 'postgres';
import type { PostgresConfig } from '../shared/config.js';
import { failureCause, isConnectionFailure } from '../shared/postgres-errors.js';
import { replicaConnectMs } from '../shared/postgres-url.js';

/** Pause between attempts while the database is unreachable. */
const RETRY_MS = 250;
/** An attempt's own bound when little of the wait is left. */
const MIN_ATTEMPT_MS = 500;

/** Which database a variable names, and how to show it (password redacted). */
export interface DatabaseTarget {
  variable: 'SERVICE_DATABASE_URL' | 'SERVICE_READ_DATABASE_URL';
  url: string;
  label: string;
}

export class DatabaseUnreachableError extends Error {
  constructor(readonly target: DatabaseTarget, readonly reason: string, waitedMs: number | null) {
    super(`cannot connect to ${target.variable} (${target.label})` +
      `${waitedMs === null ? '' : ` after retrying for ${Math.round(waitedMs / 1000)} s`}: ${reason}`);
    this.name = 'DatabaseUnreachableError';
  }
}

/**
 * Resolves once the database answers a query. A connection failure is retried until `waitMs`
 * has passed; a refusal that waiting will not change (password, missing database) fails at once.
 */
export async function waitForDatabase(target: DatabaseTarget, waitMs: number, onRetry?: (reason: string) => void): Promise<void> {
  const started = performance.now();
  const deadline = started + waitMs;
  for (let first = true; ; first = false) {
    const failure = await attempt(target.url, Math.max(MIN_ATTEMPT_MS, deadline - performance.now()));
    if (failure === null) return;
    if (!isConnectionFailure(failure)) throw new DatabaseUnreachableError(target, failureCause(failure), null);
    if (performance.now() + RETRY_MS >= deadline) throw new DatabaseUnreachableError(target, failureCause(failure), performance.now() - started);
    if (first) onRetry?.(failureCause(failure));
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

/** One connection and `SELECT 1` within `timeoutMs`: null, or what failed. */
async function attempt(url: string, timeoutMs: number): Promise<unknown> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: timeoutMs / 1000, connection: { application_name: 'memory-runtime start' } });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<unknown>((resolve) => {
    timer = setTimeout(() => resolve(Object.assign(new Error('connection timed out'), { code: 'CONNECT_TIMEOUT' })), timeoutMs);
  });
  try {
    return await Promise.race([sql`SELECT 1`.then(() => null, (error: unknown) => error), timedOut]);
  } finally {
    clearTimeout(timer);
    await sql.end({ timeout: 0 }).catch(() => {});
  }
}

/**
 * The primary, waited for (up to startTimeoutMs). The replicas, when set, are tried once
 * meanwhile: a refusal that waiting will not change (password, missing database) stops the start,
 * as it would for the primary, but a replica that does not answer does not — recall reads the
 * primary until one does, as it does for a replica lost later — so a node restarted during
 * replica maintenance still comes up. `onReplicaDown` is told why.
 */
export async function waitForDatabases(pg: PostgresConfig, onRetry: (target: DatabaseTarget, reason: string) => void,
  onReplicaDown: (target: DatabaseTarget, reason: string) => void = () => {}): Promise<void> {
  const primary: DatabaseTarget = { variable: 'SERVICE_DATABASE_URL', url: pg.url, label: pg.label };
  const replica: DatabaseTarget | null = pg.readUrl ? { variable: 'SERVICE_READ_DATABASE_URL', url: pg.readUrl, label: pg.readLabel ?? '' } : null;
  const outcomes = await Promise.allSettled([
    waitForDatabase(primary, pg.startTimeoutMs, (reason) => onRetry(primary, reason)),
    replica ? checkReplica(replica, onReplicaDown) : Promise.resolve(),
  ]);
  // The primary's failure is the one reported when both fail.
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

async function checkReplica(target: DatabaseTarget, onDown: (target: DatabaseTarget, reason: string) => void): Promise<void> {
  // Given as long as a recall gives them: a replica a recall would find, start-up finds too.
  const failure = await attempt(target.url, replicaConnectMs(target.url));
  if (failure === null) return;
  if (!isConnectionFailure(failure)) throw new DatabaseUnreachableError(target, failureCause(failure), null);
  onDown(target, failureCause(failure));
}
