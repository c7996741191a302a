// uWS ⇄ Web standard Request/Response, for handlers written against fetch-style APIs (the
// MCP SDK's WebStandardStreamableHTTPServerTransport). The uWS rules still apply on this side:
// the request was copied out of uWS before any await (RawRequest), every late write is corked,
// and nothing touches a response after the client aborted.
import { STATUS_CODES } from 'node:http';
import type { Exchange } from '../exchange.js';
import type { RawRequest } from '../mount.js';
import { drained, endInPieces } from '../body-out.js';

/**
 * A Web Request for the captured uWS request. `body` was already read under the service's
 * size limit. Aborting `request.signal` (client gone) aborts the Request's signal too.
 */
export function toWebRequest(request: RawRequest, body: Buffer | null): Request {
  const headers = new Headers();
  for (const [name, value] of request.headers) headers.append(name, value);
  const url = `http://${safeHost(headers.get('host'))}${request.url}${request.query ? `?${request.query}` : ''}`;
  return new Request(url, {
    method: request.method,
    headers,
    body: body && body.length > 0 ? body : null,
    signal: request.signal,
  });
}

/** The Host header when it can be part of a URL; a garbage Host must not turn into a 500. */
function safeHost(host: string | null): string {
  if (host) {
    try {
      return new URL(`http://${host}`).host;
    } catch {
      // fall through
    }
  }
  return 'localhost';
}

// uWS writes its own framing (Content-Length or chunked) and manages the connection itself.
const MANAGED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

function writeHead(ex: Exchange, response: Response): void {
  ex.status = response.status; // for the access log and metrics
  ex.res.writeStatus(`${response.status} ${response.statusText || STATUS_CODES[response.status] || ''}`.trimEnd());
  response.headers.forEach((value, name) => {
    if (!MANAGED_HEADERS.has(name)) ex.res.writeHeader(name, value);
  });
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}

/**
 * Writes `response` to the uWS exchange. Ordinary bodies are buffered, then written (with
 * Content-Length) as fast as the socket takes them (body-out.ts); event streams are relayed chunk by chunk as they are produced,
 * respecting backpressure, until the stream ends or the client goes away. Resolves when done.
 */
export async function sendWebResponse(ex: Exchange, response: Response, signal: AbortSignal): Promise<void> {
  if (ex.aborted || ex.done) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  ex.done = true;
  if (response.body === null || !isEventStream(response)) {
    const payload = response.body === null ? null : new Uint8Array(await response.arrayBuffer());
    if (ex.aborted) return;
    let sent: Promise<void> | undefined;
    ex.res.cork(() => {
      writeHead(ex, response);
      // A large tool result goes out as the socket takes it, not copied whole into uWS.
      if (payload && !ex.closeAfter) sent = endInPieces(ex, payload);
      else ex.res.end(payload ?? '', ex.closeAfter);
    });
    await sent;
    return;
  }
  await relayStream(ex, response, signal);
}

async function relayStream(ex: Exchange, response: Response, signal: AbortSignal): Promise<void> {
  const reader = response.body!.getReader();
  // Cancelling the reader tells the producer (the MCP transport) that nobody is listening.
  const stop = () => void reader.cancel().catch(() => {});
  signal.addEventListener('abort', stop, { once: true });
  try {
    // Headers go out at once, so the client sees the stream open before the first event. uWS
    // sends nothing for an empty write, so an SSE comment (ignored by every SSE parser) opens it.
    ex.res.cork(() => {
      writeHead(ex, response);
      ex.res.write(': open\n\n');
    });
    for (;;) {
      const { done, value } = await reader.read();
      if (ex.aborted) return;
      if (done) {
        ex.res.cork(() => ex.res.end(undefined, ex.closeAfter));
        return;
      }
      let writable = true;
      ex.res.cork(() => {
        writable = ex.res.write(value);
      });
      // uWS buffered the chunk; wait until the socket drains before producing more.
      if (!writable) await drained(ex, signal);
    }
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
