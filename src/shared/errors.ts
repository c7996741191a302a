// The error catalogue, in one place (Fastify's lib/errors.js is the model): every stable code
// with its HTTP status and when it is answered, the HTTP status line of every status the service
// sends, and — in `fail` — every message the service composes. A failure is a ServiceError with
// one of these codes; it crosses threads as a plain {code, message} (structured clone drops class
// identity) and leaves the HTTP layer as {error, code}.
import { isConnectionFailure, isReadOnlyServer } from './postgres-errors.js';

interface CodeEntry {
  readonly status: number;
  /** When it is answered (the OpenAPI document's response descriptions). */
  readonly when: string;
  /** A client should retry after this many seconds (the Retry-After header). */
  readonly retryAfter?: number;
}

export const ERROR_CODES = {
  MALFORMED_BODY: { status: 422, when: 'the body is not JSON, not an object, lacks a field or has a wrong JSON type' },
  INVALID_VALUE: { status: 400, when: 'a value is not allowed (range, enum, length)' },
  UNKNOWN_FIELD: { status: 400, when: 'a body field, query parameter or tool argument the operation does not take (a misspelt name is refused, never ignored)' },
  INVALID_PATH: { status: 400, when: 'a path segment is not valid percent-encoding' },
  UNAUTHORIZED: { status: 401, when: 'missing or invalid Bearer token' },
  NAMESPACE_FORBIDDEN: { status: 403, when: 'the API key is bound to another namespace than the one the Memory-Namespace header names, or the route is for operator (unbound) keys only' },
  INVALID_NAMESPACE: { status: 400, when: 'the Memory-Namespace header is empty, repeated with different values, longer than 128 characters, or holds control characters or invalid UTF-8' },
  NOT_FOUND: { status: 404, when: 'unknown entity or episode (or an expired episode)' },
  ROUTE_NOT_FOUND: { status: 404, when: 'no route for the path' },
  SNAPSHOT_NOT_FOUND: { status: 404, when: 'no deletion snapshot with that id' },
  SNAPSHOT_CONFLICT: { status: 409, when: 'the snapshot was taken in another namespace, or another namespace holds its ids' },
  SNAPSHOT_UNUSABLE: { status: 409, when: 'the snapshot file is unreadable or damaged (nothing was restored)' },
  RESTORE_INTERRUPTED: { status: 409, when: 'the snapshot file could not be read to its end after part of it was restored; repeat the restore to finish (it skips what is present)' },
  ENTITY_BUSY: { status: 409, when: 'deletes of this entity already fill its queue (one runs, 4 wait), or 64 deletes wait behind a restore, or (PostgreSQL) another node\'s delete of it or restore ran on for 30 s; retry once they end' },
  RESTORE_BUSY: { status: 409, when: 'restores already fill their queue (one runs at a time, 4 wait), or (PostgreSQL) another node\'s delete or restore ran on for 30 s; retry once they end' },
  METHOD_NOT_ALLOWED: { status: 405, when: 'the path does not take this method (see Allow)' },
  BODY_TOO_LARGE: { status: 413, when: 'request body above the configured limit' },
  RATE_LIMITED: { status: 429, when: 'rate limit exceeded; see Retry-After (seconds)' },
  // nginx's convention: nobody is left to read it, so it is only ever logged and counted.
  CLIENT_CLOSED: { status: 499, when: 'the client went away before the answer' },
  RECALL_FAILED: { status: 500, when: 'the recall pipeline failed' },
  SNAPSHOT_FAILED: { status: 500, when: 'the deletion snapshot could not be written (nothing was deleted)' },
  INTERNAL: { status: 500, when: 'internal failure' },
  SHUTTING_DOWN: { status: 503, when: 'draining for shutdown' },
  // The writer thread died; the process exits for its supervisor to restart it.
  WRITER_UNAVAILABLE: { status: 503, when: 'the writer thread died and the process is restarting (see Retry-After)', retryAfter: 5 },
  // A consolidation run asked for waited SERVICE_CONSOLIDATE_WAIT_SECONDS behind another run (here or on another node).
  CONSOLIDATION_BUSY: { status: 503, when: 'another consolidation run (scheduled, requested, or on another node) did not end within SERVICE_CONSOLIDATE_WAIT_SECONDS; see Retry-After', retryAfter: 10 },
  // PostgreSQL: no primary answered within SERVICE_DATABASE_WRITE_WAIT_MS (a failover, an outage); nothing was stored.
  DATABASE_UNAVAILABLE: { status: 503, when: 'PostgreSQL: no primary database answered within SERVICE_DATABASE_WRITE_WAIT_MS (a failover or an outage) or the connection was lost during the write; the write was not acknowledged (see Retry-After)', retryAfter: 2 },
  SERVER_BUSY: { status: 503, when: 'the in-flight request or body caps are reached (see Retry-After)', retryAfter: 1 },
  // The disk holding the database or the snapshots is full: nothing was stored.
  STORAGE_FULL: { status: 507, when: 'the disk is full: nothing was stored; see Retry-After (seconds)', retryAfter: 60 },
} as const satisfies Record<string, CodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The reason phrase of every status the service answers with (403: MCP's DNS-rebinding refusal; 304/308: the console's static files). */
export const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK', 201: 'Created', 304: 'Not Modified', 308: 'Permanent Redirect', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict',
  413: 'Payload Too Large', 422: 'Unprocessable Entity', 429: 'Too Many Requests', 499: 'Client Closed Request',
  500: 'Internal Server Error', 503: 'Service Unavailable', 507: 'Insufficient Storage',
};

/** The form an error takes on a cross-thread message. */
export interface WireError {
  code: ErrorCode;
  message: string;
}

/**
 * The input field a refusal is about, as data rather than text: `path` from the validated value
 * ('' for the value itself; `valid_from`, `participants[2]`), `reason` what is wrong with it. A
 * caller that nests the value elsewhere (remember/batch's facts[3]) names the field from these.
 */
export interface FieldFault {
  path: string;
  reason: string;
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  /** Set on a refusal of one input field (validation.ts, event-time.ts). */
  readonly fault?: FieldFault;
  constructor(code: ErrorCode, message: string, fault?: FieldFault) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    if (fault) this.fault = fault;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retryAfterSeconds(): number | undefined {
    return (ERROR_CODES[this.code] as CodeEntry).retryAfter;
  }

  toWire(): WireError {
    return { code: this.code, message: this.message };
  }

  static fromWire(wire: WireError): ServiceError {
    return new ServiceError(wire.code in ERROR_CODES ? wire.code : 'INTERNAL', wire.message);
  }

  /**
   * Anything thrown that is not a ServiceError is an internal fault (its text is kept for logs),
   * except a full disk: SQLite's SQLITE_FULL, PostgreSQL's 53100 or the file system's
   * ENOSPC/EDQUOT is the operator's to fix, and the client's to retry, so it gets its own code;
   * and a PostgreSQL connection failure, which is DATABASE_UNAVAILABLE (503 with Retry-After).
   */
  static from(error: unknown): ServiceError {
    if (error instanceof ServiceError) return error;
    if (isDiskFull(error)) return fail.storageFull();
    // A lost database connection, or a standby refusing a write, is an outage to retry, not a fault.
    if (isConnectionFailure(error) || isReadOnlyServer(error)) return fail.databaseUnavailable();
    const message = error instanceof Error ? error.message : String(error);
    return new ServiceError('INTERNAL', message);
  }
}

const error = (code: ErrorCode, message: string) => new ServiceError(code, message);
/** A refusal of one field: the message says "<field>: <reason>", the fault says the same as data. */
const fieldError = (code: ErrorCode, field: string, path: string, reason: string) => new ServiceError(code, `${field}: ${reason}`, { path, reason });

/** Every failure the service reports, by what went wrong: its code and its message. */
export const fail = {
  // The request itself (validation.ts, body.ts, http/server.ts).
  emptyBody: () => error('MALFORMED_BODY', 'body: expected a JSON object, got an empty body'),
  invalidJson: (reason: string) => error('MALFORMED_BODY', `body: invalid JSON (${reason})`),
  /** `detail` names the field and what is wrong with its JSON type or presence. */
  malformed: (detail: string, fault?: FieldFault) => new ServiceError('MALFORMED_BODY', detail, fault),
  nestedTooDeep: (field: string, maxDepth: number, path = field) => fieldError('MALFORMED_BODY', field, path, `nested more than ${maxDepth} levels deep`),
  /** `detail` names the field and the value rule it breaks. */
  invalidValue: (detail: string, fault?: FieldFault) => new ServiceError('INVALID_VALUE', detail, fault),
  /** One field's value is not allowed: `field` as messages name it, `path` from the validated value (FieldFault). */
  invalidField: (field: string, reason: string, path = field) => fieldError('INVALID_VALUE', field, path, reason),
  /** `detail` names the unknown field(s) and what the operation takes (validation.ts). */
  unknownField: (detail: string) => error('UNKNOWN_FIELD', detail),
  /** A body field that a path segment also gives (episode_id), with another value. */
  pathMismatch: (field: string) => error('INVALID_VALUE', `${field}: differs from the ${field} in the path`),
  illFormedUnicode: (field: string, path = field) => fieldError('INVALID_VALUE', field, path, 'not well-formed Unicode (a lone UTF-16 surrogate)'),
  /** The PostgreSQL backend cannot store U+0000 in text (SQLite can). */
  nulCharacter: (field: string) => error('INVALID_VALUE', `${field}: contains U+0000 (NUL), which the PostgreSQL store cannot hold`),
  /** `field`: the Memory-Position header, or the MCP `_meta` key, a caller sent. */
  invalidPosition: (field: string) =>
    error('INVALID_VALUE', `${field}: must be a WAL position as a write's answer gives it (PostgreSQL pg_lsn text, e.g. 0/16B3748)`),
  invalidPath: (segment: string) => error('INVALID_PATH', `path segment '${segment}' is not valid percent-encoding`),
  bodyTooLarge: (limit: number) => error('BODY_TOO_LARGE', `request body exceeds the ${limit}-byte limit`),
  clientClosed: () => error('CLIENT_CLOSED', 'client closed the connection before the body was read'),
  routeNotFound: (method: string, url: string) => error('ROUTE_NOT_FOUND', `no route for ${method} ${url}`),
  methodNotAllowed: (method: string, path: string, allowed: string) =>
    error('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; use ${allowed}`),
  // The gate (http/server.ts, body.ts, core/writer-client.ts).
  unauthorized: () => error('UNAUTHORIZED', 'missing or invalid Bearer token'),
  namespaceForbidden: (own: string) => error('NAMESPACE_FORBIDDEN', `this API key acts on namespace '${own}' only`),
  operatorOnly: () => error('NAMESPACE_FORBIDDEN', 'this route is for operator keys (keys bound to no namespace) only'),
  invalidNamespace: (reason: string) => error('INVALID_NAMESPACE', `header Memory-Namespace: ${reason}`),
  tooManyAuthFailures: () => error('RATE_LIMITED', 'too many failed authentications from this address'),
  rateLimited: (perMinute: number) => error('RATE_LIMITED', `rate limit of ${perMinute} requests per minute exceeded`),
  shuttingDown: () => error('SHUTTING_DOWN', 'service is shutting down'),
  tooManyRequests: (max: number) => error('SERVER_BUSY', `more than ${max} requests in flight; retry shortly`),
  tooManyBodies: () => error('SERVER_BUSY', 'too many request bodies in flight; retry shortly'),
  consolidationBusy: (waitedSeconds: number) => error('CONSOLIDATION_BUSY',
    `another consolidation run is in progress and did not end within ${waitedSeconds} s; retry later`),
  databaseUnavailable: () => error('DATABASE_UNAVAILABLE', 'writes are unavailable: no primary database answers (a failover or an outage); retry shortly'),
  writerStopped: () => error('WRITER_UNAVAILABLE', 'writes are unavailable: the writer thread stopped and the service is restarting'),
  // The operations.
  entityNotFound: (entity: string) => error('NOT_FOUND', `entity '${entity}' not found`),
  episodeNotFound: (episodeId: string) => error('NOT_FOUND', `episode '${episodeId}' not found`),
  memoryNotFound: (id: string) => error('NOT_FOUND', `memory '${id}' not found`),
  episodeEnded: (episodeId: string) => error('NOT_FOUND', `episode '${episodeId}' has already ended`),
  episodeExpired: (episodeId: string) => error('NOT_FOUND', `episode '${episodeId}' expired after inactivity`),
  snapshotNotFound: (id: string) => error('SNAPSHOT_NOT_FOUND', `snapshot '${id}' not found`),
  snapshotUnusable: (id: string, reason: string) => error('SNAPSHOT_UNUSABLE', `snapshot '${id}' cannot be restored: ${reason}`),
  snapshotOtherNamespace: (id: string, taken: string, served: string) => error('SNAPSHOT_CONFLICT',
    `snapshot '${id}' was taken in namespace '${taken}', not '${served}' (restore it offline with \`memory-runtime restore --force\`)`),
  snapshotIdsTaken: (reason: string) => error('SNAPSHOT_CONFLICT', reason),
  entityBusy: (entity: string, perEntity: number, total: number) => error('ENTITY_BUSY',
    `too many deletes are waiting (of entity '${entity}': at most ${perEntity}; of all entities: at most ${total}); retry once they end`),
  restoreInterrupted: (id: string, restored: number, reason: string) => error('RESTORE_INTERRUPTED',
    `snapshot '${id}' was partially restored (${restored} memories put back) before its file could not be read: ${reason}; repeat the restore to finish`),
  entityBusyElsewhere: (entity: string, node: string) => error('ENTITY_BUSY',
    `a delete of entity '${entity}' or a restore is running on node ${node}; retry once it ends`),
  restoreBusyElsewhere: (node: string) => error('RESTORE_BUSY', `a delete or restore is running on node ${node}; retry once it ends`),
  restoreBusy: (waiting: number) => error('RESTORE_BUSY', `a restore is running and ${waiting} more are waiting; retry once they end`),
  // A 5xx takes no free text: the cause (SQL, file paths) goes to the log, never to the client.
  recallFailed: () => error('RECALL_FAILED', 'recall pipeline failed'),
  snapshotNoSpace: () => error('STORAGE_FULL', 'deletion aborted: no space left for the recovery snapshot; nothing was removed'),
  snapshotFailed: (reason: string) =>
    error('SNAPSHOT_FAILED', `deletion aborted: could not write the recovery snapshot (${reason}); nothing was removed`),
  storageFull: () => error('STORAGE_FULL', 'no space left on the storage device: nothing was stored'),
  /** What a client sees of an internal fault: its text (paths, SQL) stays in the log. */
  internal: () => error('INTERNAL', 'internal server error'),
} as const;

export function toWireError(error: unknown): WireError {
  return ServiceError.from(error).toWire();
}

/** SQLite's, the file system's, and PostgreSQL's SQLSTATE disk_full (53100). */
const DISK_FULL_CODES = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT', '53100']);

export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && DISK_FULL_CODES.has(code);
}
