// Which PostgreSQL failures are the connection's rather than the statement's, and what to call
// them in a message. A connection failure may pass (a server restarting, a replica coming back,
// a failover): start-up retries it and recall reads the primary instead of a replica that has
// one. A server's refusal of who we are or what we asked for (a wrong password, a database that
// does not exist) will not pass by waiting.

import { isNullSocketWrite } from './postgres-client-guard.js';

/** The `postgres` client's own codes for a connection that failed or went away. */
const CLIENT_CODES = new Map([
  ['CONNECT_TIMEOUT', 'connection timed out'],
  ['CONNECTION_CLOSED', 'connection closed by the server'],
  ['CONNECTION_DESTROYED', 'connection closed'],
]);

/** Socket errors, in words. */
const SOCKET_CODES = new Map([
  ['ECONNREFUSED', 'connection refused'],
  ['ECONNRESET', 'connection reset'],
  ['EPIPE', 'connection closed'],
  ['ETIMEDOUT', 'connection timed out'],
  ['EHOSTUNREACH', 'host unreachable'],
  ['ENETUNREACH', 'network unreachable'],
  ['ENOTFOUND', 'host not found'],
  ['EAI_AGAIN', 'host name lookup failed'],
]);

/**
 * SQLSTATEs of a server that cannot take the session now: shutting down or starting up (57P0x),
 * too many connections (53300), and class 08 (connection exception).
 */
function transientState(code: string): boolean {
  return code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code);
}

function codeOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

/** The connection failed or was lost (retry, or read elsewhere); not a statement's own error. */
export function isConnectionFailure(error: unknown): boolean {
  const code = codeOf(error);
  // The client's write to a closed socket (postgres-client-guard.ts) can also reach the caller as
  // the query's rejection (a statement of 1 KB or more is written at once): a lost connection too.
  return (code !== null && (CLIENT_CODES.has(code) || SOCKET_CODES.has(code) || transientState(code))) || isNullSocketWrite(error);
}

/** SQLSTATE read_only_sql_transaction: the server is a standby (in recovery), not the primary. */
export function isReadOnlyServer(error: unknown): boolean {
  return codeOf(error) === '25006';
}

/**
 * A hot standby cancelled the statement so that replay could go on ("canceling statement due to
 * conflict with recovery"): 40001 when replay had to remove row versions the statement's snapshot
 * could still see, or take a lock it held; 40P01 when the statement held a buffer pin in a
 * deadlock with replay. The standby is healthy: the same read can run elsewhere. The code alone
 * decides (the message is translated under lc_messages); a read-only snapshot on a standby takes
 * no row locks and cannot fail serialization, so on a replica these codes mean recovery. 57P04
 * (a database dropped by replay) is not one: the database is gone there for good.
 */
export function isRecoveryConflict(error: unknown): boolean {
  const code = codeOf(error);
  return code === '40001' || code === '40P01';
}

/** What went wrong, in words for an operator: "connection refused", the server's own message. */
export function failureCause(error: unknown): string {
  const code = codeOf(error);
  const words = code === null ? undefined : CLIENT_CODES.get(code) ?? SOCKET_CODES.get(code);
  if (words) return words;
  if (isNullSocketWrite(error)) return 'connection closed';
  const message = error instanceof Error ? error.message : String(error);
  return message || (code ?? 'unknown error');
}
