// Reading a request body with a hard size limit. uWS hands out chunks whose memory is reused
// after the callback returns, so each one is copied. An over-size body is refused as soon
// as the limit is crossed (or up front, from Content-Length) instead of being buffered.
import type { HttpResponse } from 'uWebSockets.js';
import { ServiceError } from '../shared/errors.js';

/**
 * Resolves with the whole body. Rejects when it grows past `limit`, or when `signal` fires
 * (the client went away mid-upload: uWS then never delivers the last chunk, and a pending
 * promise would hold the request "in flight" until shutdown gave up on it).
 */
export function readBody(res: HttpResponse, declaredLength: number | null, limit: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declaredLength !== null && declaredLength > limit) {
      reject(tooLarge(limit));
      return;
    }
    if (signal.aborted) {
      reject(clientGone());
      return;
    }
    signal.addEventListener('abort', () => reject(clientGone()), { once: true });
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    res.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > limit) {
        failed = true;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(Buffer.from(new Uint8Array(chunk.slice(0))));
      if (isLast) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
  });
}

function clientGone(): ServiceError {
  return new ServiceError('CLIENT_CLOSED', 'client closed the connection before the body was read');
}

function tooLarge(limit: number): ServiceError {
  return new ServiceError('BODY_TOO_LARGE', `request body exceeds the ${limit}-byte limit`);
}

/** JSON.parse that reports a 422 instead of throwing SyntaxError. */
export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) throw new ServiceError('MALFORMED_BODY', 'body: expected a JSON object, got an empty body');
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new ServiceError('MALFORMED_BODY', `body: invalid JSON (${(error as Error).message})`);
  }
}
