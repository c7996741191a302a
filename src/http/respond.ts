// Writing responses. Everything written after the handler's synchronous part must be corked
// (uWS batches the writes into one syscall), and nothing may touch a response the client
// aborted — uWS would crash the process.
import { STATUS_TEXT, type ServiceError } from '../shared/errors.js';
import type { Exchange } from './exchange.js';
import { lingerUntilBodyEnds } from './linger.js';
import { endInPieces } from './body-out.js';


/**
 * A handler result sent as-is rather than serialised here (the Prometheus text format, for one;
 * JSON a pool worker already serialised, as bytes).
 */
export class RawBody {
  constructor(readonly contentType: string, readonly body: string | Uint8Array) {}
}

/** Status lines, built once from the catalogue's table (not per response). */
const STATUS_LINE: Record<number, string> = Object.fromEntries(
  Object.entries(STATUS_TEXT).map(([status, text]) => [status, `${status} ${text}`]),
);

export function sendJson(ex: Exchange, status: number, body: unknown, headers?: Record<string, string>): void {
  sendRaw(ex, status, new RawBody('application/json', JSON.stringify(body)), headers);
}

/** Resolves once a body sent in pieces (body-out.ts) is all written; others go out at once. */
export function sendRaw(ex: Exchange, status: number, body: RawBody, headers?: Record<string, string>): Promise<void> | void {
  if (ex.aborted || ex.done) return;
  let sent: Promise<void> | undefined;
  ex.done = true;
  ex.status = status;
  // Answered before the body was read: closing now would reset the connection under the
  // client's feet, so the answer is sent and the rest of the body drained first (linger.ts).
  const lingering = ex.body !== undefined && !ex.body.ended && !ex.head;
  ex.res.cork(() => {
    // uWS sends "200 OK" unless told otherwise: one native call fewer on the common answer.
    if (status !== 200) ex.res.writeStatus(STATUS_LINE[status] ?? String(status));
    ex.res.writeHeader('Content-Type', body.contentType);
    if (ex.requestId) ex.res.writeHeader('X-Request-Id', ex.requestId);
    if (headers) for (const name in headers) ex.res.writeHeader(name, headers[name]);
    if (ex.head || status === 304) {
      // No Content-Length (optional on HEAD): this uWS build leaves a response with a reported
      // length, or with closeConnection, unfinished — and the connection then unusable. A 304
      // has no body either (RFC 9110 §15.4.5).
      ex.res.endWithoutBody();
    } else if (lingering) {
      ex.res.writeHeader('Connection', 'close');
      ex.res.write(body.body);
    } else if (typeof body.body !== 'string' && !ex.closeAfter) {
      sent = endInPieces(ex, body.body);
    } else {
      ex.res.end(body.body, ex.closeAfter);
    }
  });
  if (lingering) lingerUntilBodyEnds(ex, ex.body!);
  return sent;
}

export function sendError(ex: Exchange, error: ServiceError, headers?: Record<string, string>): void {
  const retry = error.retryAfterSeconds;
  sendJson(ex, error.status, { error: error.message, code: error.code }, retry === undefined ? headers : { 'Retry-After': String(retry), ...headers });
}
