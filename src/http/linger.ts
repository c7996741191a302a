// Lingering close (nginx's name for it). A request refused before its body was read (413, 401,
// 429, 503, 404/405) used to be answered and the connection closed at once, with the client's
// unread bytes still in the socket: the kernel then resets the connection, and a client still
// sending (Node's fetch, curl) fails with EPIPE/ECONNRESET and never reads the answer. So the
// answer is written at once — status, headers and the whole JSON body, with Connection: close —
// and the rest of the request body is read and thrown away; the response is completed when the
// body ends.
//
// A client that keeps sending past LINGER_MAX_BYTES discarded bytes or LINGER_MAX_MS is not
// read any further: the socket is paused (what it still sends waits in kernel buffers, never in
// ours) and the answer completed, so the client holds a whole, well-framed answer; uWS closes
// the paused connection on its own idle timeout (~10 s). Closing it ourselves instead would
// reset it with the client's bytes unread, and a client busy writing (curl, a raw socket) then
// loses even the answer it was sent — and an unterminated chunked answer is no answer anyway.
//
// uWS cannot close a connection once a response has ended (the response object is invalid
// from then on), so the answer goes out as one chunk of a chunked response and the terminating
// chunk is written when the body ends or the client is cut off; the only close left to us,
// res.close(), is a reset.
import type { BodyStream } from './body.js';
import type { Exchange } from './exchange.js';

/** Discarded bytes after which a lingering connection stops being read. */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;
/** Milliseconds after the answer at which a lingering connection stops being read. */
export const LINGER_MAX_MS = 10_000;

/**
 * Called right after the answer was written (not ended): completes it once `body` has been
 * drained, or stops reading and completes it when the client sends too much or for too long.
 */
export function lingerUntilBodyEnds(ex: Exchange, body: BodyStream): void {
  const { res } = ex;
  let over = false;
  const finish = (cutOff: boolean) => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    if (ex.aborted) return;
    res.cork(() => {
      // Paused before the end: the response object is unusable afterwards.
      if (cutOff) res.pause();
      res.end();
    });
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
