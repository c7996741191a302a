// Lingering close (nginx's name for it). A request refused before its body was read (413, 401,
// 429, 503, 404/405) used to be answered and the connection closed at once, with the client's
// unread bytes still in the socket: the kernel then resets the connection, and a client still
// sending (Node's fetch, curl) fails with EPIPE/ECONNRESET and never reads the answer. So the
// answer is written at once — status, headers and the whole JSON body, with Connection: close —
// and the rest of the request body is read and thrown away; the response is completed when the
// body ends. A client that keeps sending gets the connection closed after LINGER_MAX_BYTES
// discarded bytes or LINGER_MAX_MS, whichever comes first: it has had its answer all along.
//
// uWS cannot close a connection once a response has ended, so the answer goes out as one
// chunk of a chunked response and the terminating chunk is written when the body ends.
import type { BodyStream } from './body.js';
import type { Exchange } from './exchange.js';

/** Discarded bytes after which a lingering connection is closed. */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;
/** Milliseconds after the answer at which a lingering connection is closed. */
export const LINGER_MAX_MS = 10_000;

/**
 * Called right after the answer was written (not ended): completes it once `body` has been
 * drained, or closes the connection when the client sends too much or for too long.
 */
export function lingerUntilBodyEnds(ex: Exchange, body: BodyStream): void {
  const { res } = ex;
  let over = false;
  const finish = (close: boolean) => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    if (ex.aborted) return;
    // A reset now costs the client nothing: its answer went out first.
    if (close) res.close();
    else res.cork(() => res.end());
  };
  const timer = setTimeout(() => finish(true), LINGER_MAX_MS).unref();
  body.discardLimit = LINGER_MAX_BYTES;
  body.onOverflow = () => finish(true);
  body.onEnd = () => finish(false);
  ex.onAbort = () => {
    over = true;
    clearTimeout(timer);
  };
  if (body.ended) finish(false);
}
