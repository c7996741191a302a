// One error catalogue: stable code → HTTP status. Every failure the service reports is a
// ServiceError with one of these codes; it crosses threads as a plain {code, message}
// (structured clone drops class identity) and leaves the HTTP layer as {error, code}.

export const ERROR_STATUS = {
  MALFORMED_BODY: 422, // not JSON, not an object, missing field, wrong JSON type
  INVALID_VALUE: 400, // right shape, value not allowed
  INVALID_PATH: 400, // bad percent-encoding in a path segment
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  CLIENT_CLOSED: 499, // nobody is left to read it; used for logs and metrics only
  SNAPSHOT_FAILED: 500,
  RECALL_FAILED: 500,
  INTERNAL: 500,
  SHUTTING_DOWN: 503,
  WRITER_UNAVAILABLE: 503, // the writer thread died; the process exits for its supervisor to restart it
  STORAGE_FULL: 507, // the disk holding the database or the snapshots is full: nothing was stored
  SERVER_BUSY: 503, // in-flight request or body caps reached; answered with Retry-After
} as const;

/** Errors a client should retry later, and after how many seconds (the Retry-After header). */
export const RETRY_AFTER_SECONDS: Partial<Record<keyof typeof ERROR_STATUS, number>> = {
  WRITER_UNAVAILABLE: 5,
  STORAGE_FULL: 60,
  SERVER_BUSY: 1,
};

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The form an error takes on a cross-thread message. */
export interface WireError {
  code: ErrorCode;
  message: string;
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  get retryAfterSeconds(): number | undefined {
    return RETRY_AFTER_SECONDS[this.code];
  }

  toWire(): WireError {
    return { code: this.code, message: this.message };
  }

  static fromWire(wire: WireError): ServiceError {
    return new ServiceError(wire.code in ERROR_STATUS ? wire.code : 'INTERNAL', wire.message);
  }

  /**
   * Anything thrown that is not a ServiceError is an internal fault (its text is kept for logs),
   * except a full disk: SQLite's SQLITE_FULL or the file system's ENOSPC/EDQUOT is the
   * operator's to fix, and the client's to retry, so it gets its own code.
   */
  static from(error: unknown): ServiceError {
    if (error instanceof ServiceError) return error;
    if (isDiskFull(error)) return new ServiceError('STORAGE_FULL', 'no space left on the storage device: nothing was stored');
    const message = error instanceof Error ? error.message : String(error);
    return new ServiceError('INTERNAL', message);
  }
}

export function toWireError(error: unknown): WireError {
  return ServiceError.from(error).toWire();
}

const DISK_FULL_CODES = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT']);

export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && DISK_FULL_CODES.has(code);
}
