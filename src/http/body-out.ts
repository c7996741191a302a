// Writing a large body to uWS at the pace the client reads it. `res.end(body)` copies whatever
// the socket cannot take at once into uWS's own buffer: a second whole copy of every large
// answer, held until the client has read it. `tryEnd` writes what the socket takes and leaves
// the rest with us; `onWritable` says when to try again. Main-thread side.
import type { HttpResponse } from 'uWebSockets.js';

/** The part of an Exchange (respond.ts) this needs. */
interface Outgoing {
  readonly res: HttpResponse;
  /** Run when uWS reports the client gone. */
  onAbort?: () => void;
}

/**
 * Ends the response with `body` (uWS adds its Content-Length), a socket-full at a time. Call it
 * inside a cork, after the status and headers. Resolves once the client has it all, or left.
 */
export function endInPieces(ex: Outgoing, body: Uint8Array): Promise<void> {
  const start = ex.res.getWriteOffset();
  /** Writes from where the socket stopped taking; [ok, done] as tryEnd says. */
  const attempt = () => ex.res.tryEnd(body.subarray(ex.res.getWriteOffset() - start), body.length);
  if (attempt()[1]) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = ex.onAbort;
    ex.onAbort = () => {
      onAbort?.();
      resolve();
    };
    ex.res.onWritable(() => {
      const [ok, done] = attempt();
      if (done) resolve();
      // false: the socket is full again; uWS calls back when it drains.
      return ok;
    });
  });
}

/** Resolves when uWS can take more of a chunked (write()) response, or the client left. */
export function drained(ex: Outgoing, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    // Removed when the wait ends: a long stream waits many times on the same signal.
    const onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    ex.res.onWritable(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
      return true;
    });
  });
}
