// Request bodies. Every request that declares a body gets ONE uWS data handler, attached in the
// synchronous part of the handler (uWS drops data nobody listens for, and replacing a data
// handler from inside its own callback is unsafe). The stream starts out discarding: a body
// nobody reads — because the request was refused before reading it, or the route takes none —
// is counted and thrown away, never buffered, so an early answer can wait for its end (see
// linger.ts). `BodyStream.read` switches it to reading, with a hard size limit, a share of the
// service-wide in-flight body budget, and back to discarding once a limit is crossed.
import type { HttpResponse } from 'uWebSockets.js';
import { fail } from '../shared/errors.js';

/** Service-wide bytes of request bodies being buffered at once (SERVICE_MAX_INFLIGHT_BODY_BYTES). */
export class BodyBudget {
  used = 0;
  constructor(readonly cap: number) {}
}

export class BodyStream {
  /** The client sent the last chunk (or the connection is gone). */
  ended = false;
  /** Bytes thrown away since the stream last switched to discarding. */
  discarded = 0;
  /** Called once when the body ends while discarding (the lingering answer completes then). */
  onEnd: (() => void) | null = null;
  /** Called when the discarded bytes pass `discardLimit` (the lingering answer gives up). */
  onOverflow: (() => void) | null = null;
  discardLimit = Infinity;
  private reader: ((chunk: ArrayBuffer, isLast: boolean) => void) | null = null;
  private reserved = 0;

  constructor(res: HttpResponse, private readonly budget: BodyBudget) {
    res.onData((chunk, isLast) => {
      if (this.reader) return this.reader(chunk, isLast);
      this.discarded += chunk.byteLength;
      if (isLast) this.end();
      else if (this.discarded > this.discardLimit) this.onOverflow?.();
    });
  }

  /** The connection closed: no more chunks will come. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd?.();
  }

  /** Hands the buffered bytes back to the in-flight budget (when the request is finished). */
  release(): void {
    this.budget.used -= this.reserved;
    this.reserved = 0;
  }

  /**
   * Resolves with the whole body. Rejects when it grows past `limit` or past the service's
   * in-flight budget, counted in bytes received (then the rest is discarded), or when `signal` fires (the client went away
   * mid-upload: uWS then never delivers the last chunk).
   */
  read(declaredLength: number | null, limit: number, signal: AbortSignal): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (declaredLength !== null && declaredLength > limit) return reject(fail.bodyTooLarge(limit));
      if (signal.aborted) return reject(fail.clientClosed());
      signal.addEventListener('abort', () => reject(fail.clientClosed()), { once: true });
      const chunks: Buffer[] = [];
      let size = 0;
      this.reader = (chunk, isLast) => {
        size += chunk.byteLength;
        // Reserved as bytes arrive, never on the declared length: a client declaring 1 MiB and
        // sending nothing would otherwise hold 1 MiB of the budget for free (64 header-only
        // connections, renewed every 10 s, refused every body on the default caps).
        const failure = size > limit ? fail.bodyTooLarge(limit) : !this.reserve(chunk.byteLength) ? fail.tooManyBodies() : null;
        if (failure) {
          this.reader = null; // the rest of the body is counted and dropped
          // Refused on its last chunk: nothing is left to drain, so the answer must not linger.
          if (isLast) this.ended = true;
          reject(failure);
          return;
        }
        chunks.push(Buffer.from(new Uint8Array(chunk.slice(0))));
        if (isLast) {
          this.ended = true;
          // Settled on the next turn, after uWS has parsed the rest of what it received: a
          // pipelined request behind this one makes uWS drop the connection, and the abort then
          // wins, so a write is never executed without its answer reaching anyone.
          const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
          setImmediate(() => resolve(body));
        }
      };
    });
  }

  private reserve(bytes: number): boolean {
    if (this.budget.used + bytes > this.budget.cap) return false;
    this.budget.used += bytes;
    this.reserved += bytes;
    return true;
  }
}

const EMPTY = Buffer.alloc(0);

/** The body of a request that declared none: empty, on the next turn (see `read`). */
export function noBody(signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    setImmediate(() => {
      if (signal.aborted) reject(fail.clientClosed());
      else resolve(EMPTY);
    }),
  );
}

/** JSON.parse that reports a 422 instead of throwing SyntaxError. */
export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) throw fail.emptyBody();
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw fail.invalidJson((error as Error).message);
  }
}
