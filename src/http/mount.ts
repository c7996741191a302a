// A mount is a handler that owns a whole path and its response (MCP at /mcp), as opposed to a
// REST route that returns a value. It still runs behind the server's shared gate (draining,
// auth, rate limit), so every surface on the port is protected the same way.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Exchange } from './exchange.js';
import type { NamespaceScope } from '../core/operations/contract.js';

/** Everything a mount may need from the request, copied out before the first await. */
export interface RawRequest {
  /** Upper-case HTTP method. */
  method: string;
  /** Path without the query string. */
  url: string;
  /** Query string without the leading '?', or ''. */
  query: string;
  /** Header names lower-cased (uWS delivers them so); repeated headers appear repeatedly. */
  headers: Array<[string, string]>;
  contentLength: number | null;
  /** Client address, for rate limiting when auth is off. */
  client: string;
  /** Aborted when the client goes away (uWS onAborted). */
  signal: AbortSignal;
}

export interface Mount {
  /** uWS pattern matched with `any`, so the mount decides which methods it serves. */
  path: string;
  /**
   * Served without an API key (still draining-checked and rate limited, by client address):
   * only for content that holds no data, such as the console's static files.
   */
  public?: boolean;
  /**
   * Called once the gate has admitted the request. Must attach any body reader synchronously
   * (before its first await): uWS does not buffer a body nobody listens for. Throwing a
   * ServiceError before a response was sent answers with the usual `{error, code}`.
   */
  handle(ex: Exchange, request: RawRequest, scope: NamespaceScope): Promise<void>;
}

/** Copies the request out of uWS; `req` is invalid once the handler returns or awaits. */
export function captureRequest(res: HttpResponse, req: HttpRequest, signal: AbortSignal): RawRequest {
  const headers: Array<[string, string]> = [];
  req.forEach((name, value) => {
    headers.push([name, value]);
  });
  const length = req.getHeader('content-length');
  return {
    method: req.getCaseSensitiveMethod().toUpperCase(),
    url: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    contentLength: length === '' ? null : Number(length),
    client: Buffer.from(res.getRemoteAddressAsText()).toString(),
    signal,
  };
}

export function headerOf(request: RawRequest, name: string): string {
  return request.headers.find(([key]) => key === name)?.[1] ?? '';
}
