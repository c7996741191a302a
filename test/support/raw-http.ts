// HTTP/1.1 over a raw socket, for what fetch cannot do: send exact bytes (HTTP/1.0, bad
// request lines, pipelining), keep sending a body after the answer came, or read answers
// that arrive before the request was fully written.
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawExchange {
  /** Every complete answer read from the connection, in order. */
  answers: RawAnswer[];
  /** The socket error seen, if any (ECONNRESET, EPIPE); answers read before it are kept. */
  error: string | null;
  /** True when the server closed the connection. */
  closed: boolean;
  /** Every byte received, as latin1 text (for answers cut short). */
  received: string;
}

/** Splits complete HTTP/1.1 responses (Content-Length or chunked) off the front of `buffer`. */
export function parseAnswers(buffer: Buffer): { answers: RawAnswer[]; rest: Buffer } {
  const answers: RawAnswer[] = [];
  for (;;) {
    const headEnd = buffer.indexOf('\r\n\r\n');
    if (headEnd < 0) break;
    const [statusLine, ...lines] = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let offset = headEnd + 4;
    let body: Buffer;
    if (headers['transfer-encoding'] === 'chunked') {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = buffer.indexOf('\r\n', offset);
        if (lineEnd < 0) return { answers, rest: buffer };
        const size = parseInt(buffer.subarray(offset, lineEnd).toString('latin1'), 16);
        if (buffer.length < lineEnd + 2 + size + 2) return { answers, rest: buffer };
        parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        offset = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (buffer.length < offset + length) break;
      body = buffer.subarray(offset, offset + length);
      offset += length;
    }
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') });
    buffer = buffer.subarray(offset);
  }
  return { answers, rest: buffer };
}

export interface RawRequestOptions {
  port: number;
  /** Bytes written first (request line, headers, any small body). */
  head: string | Buffer;
  /** Further body bytes to stream after `head`, written as fast as the socket takes them. */
  bodyBytes?: number;
  /** Stream the body as chunked transfer-encoding instead of raw bytes. */
  chunked?: boolean;
  /** Resolve once this many answers were read (default: when the server closes). */
  expectAnswers?: number;
  localAddress?: string;
  /** Give up after this many ms (error 'TIMEOUT'): for requests the server is known to leave unanswered. */
  timeoutMs?: number;
}

/** Sends one raw exchange; resolves when the expected answers arrived or the connection ended. */
export function rawRequest(options: RawRequestOptions): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = net.connect({ port: options.port, host: '127.0.0.1', localAddress: options.localAddress });
    const result: RawExchange = { answers: [], error: null, closed: false, received: '' };
    let pending: Buffer = Buffer.alloc(0);
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(result);
    };
    socket.on('data', (data) => {
      result.received += data.toString('latin1');
      const parsed = parseAnswers(Buffer.concat([pending, data]));
      pending = parsed.rest;
      result.answers.push(...parsed.answers);
      if (options.expectAnswers !== undefined && result.answers.length >= options.expectAnswers) settle();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      result.error = error.code ?? error.message;
      settle();
    });
    socket.on('close', () => {
      result.closed = true;
      settle();
    });
    if (options.timeoutMs !== undefined) {
      setTimeout(() => {
        result.error ??= 'TIMEOUT';
        settle();
      }, options.timeoutMs).unref();
    }
    socket.write(options.head);
    const total = options.bodyBytes ?? 0;
    const block = Buffer.alloc(256 * 1024, 0x61);
    let sent = 0;
    const pump = () => {
      while (sent < total && !settled) {
        const piece = block.subarray(0, Math.min(block.length, total - sent));
        sent += piece.length;
        const frame = options.chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
        if (!socket.write(frame)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (options.chunked && sent >= total && !settled) socket.write('0\r\n\r\n');
    };
    pump();
  });
}
