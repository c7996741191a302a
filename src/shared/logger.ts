// Structured JSON-lines logs on stdout (pino). Level from LOG_LEVEL (default info).
// Request bodies and Authorization headers are never passed to the logger.
import { writeSync } from 'node:fs';
import { pino, type Logger } from 'pino';

export type { Logger };

/** Longest a quiet service holds a log line back. */
const FLUSH_MS = 100;

/** `destination` is for tests (a line collector); the service writes to buffered stdout. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', destination: { write(line: string): void } = stdout()): Logger {
  return pino({ level, base: { service: 'memory-runtime' }, redact: ['authorization', 'headers.authorization', 'apiKey'] }, destination);
}

let buffered: BufferedStdout | null = null;

/** Lines collected before one write(2): at ~130 bytes an access line, ~120 lines a write. */
const FLUSH_CHARS = 16_384;

/**
 * Buffered stdout, one per process: lines collect up to 16 KiB (or 100 ms) and go out in one
 * write(2), instead of one write per access line (~10% of GET /v1/health's main-thread time
 * under wrk, from a CPU profile). Not pino's sonic-boom: in its buffered mode every line
 * re-measures the byte length of the whole pending buffer (Buffer.byteLength, 1.4% of the
 * main thread under wrk, with its 4 KiB writes another 1.6%). What is pending is written
 * synchronously when the process exits; a SIGKILL loses at most the last 100 ms of lines.
 */
function stdout(): BufferedStdout {
  if (buffered) return buffered;
  const destination = new BufferedStdout(1);
  setInterval(() => destination.flush(), FLUSH_MS).unref();
  // The last lines ("stopped", a fatal error) must not wait for a flush that never comes.
  process.once('exit', () => destination.flush());
  buffered = destination;
  return destination;
}

class BufferedStdout {
  /** Lines not yet written: appending builds a rope, flattened once by the write. */
  private pending = '';
  /** For Atomics.wait: a synchronous sleep while a full pipe drains. */
  private readonly sleeper = new Int32Array(new SharedArrayBuffer(4));

  constructor(private readonly fd: number) {}

  /** pino's destination interface: one serialised line, newline included. */
  write(line: string): void {
    this.pending += line;
    // UTF-16 units, not bytes: only decides when to flush.
    if (this.pending.length >= FLUSH_CHARS) this.flush();
  }

  flush(): void {
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    // One write of the string; a Buffer only for what a short write (a full pipe) left over.
    let rest: Buffer | null = null;
    for (;;) {
      try {
        if (rest === null) {
          const written = writeSync(this.fd, text);
          if (written === text.length && written === Buffer.byteLength(text)) return;
          rest = Buffer.from(text).subarray(written);
        } else {
          rest = rest.subarray(writeSync(this.fd, rest));
        }
        if (rest.length === 0) return;
      } catch (error) {
        // A non-blocking pipe that is full: wait for the reader, as sonic-boom does.
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') Atomics.wait(this.sleeper, 0, 0, 1);
        // Anything else (stdout closed): the lines cannot be written; requests go on.
        else return;
      }
    }
  }
}
