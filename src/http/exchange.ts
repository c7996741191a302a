// One request's state while the service answers it, shared by the server, the response writers,
// lingering close and the MCP bridge.
import type { HttpResponse } from 'uWebSockets.js';
import type { BodyStream } from './body.js';

export interface Exchange {
  readonly res: HttpResponse;
  aborted: boolean;
  /** Set once a response was sent; guards against a second one. */
  done: boolean;
  /** Ask the client to close the connection after this response (used while draining). */
  closeAfter: boolean;
  /** Echoed as X-Request-Id on whatever response is sent. */
  requestId?: string;
  /** Status of the response sent, for the access log and metrics. */
  status?: number;
  /** The request body, when one was declared (Content-Length > 0 or chunked). */
  body?: BodyStream;
  /** A HEAD request: the answer's status and headers (Content-Length included), no body. */
  head?: boolean;
  /** Run when uWS reports the client gone (after `aborted` is set). */
  onAbort?: () => void;
}
