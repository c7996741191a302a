// Structured JSON-lines logs on stdout (pino). Level from LOG_LEVEL (default info).
// Request bodies and Authorization headers are never passed to the logger.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { service: 'memory-runtime' }, redact: ['authorization', 'headers.authorization', 'apiKey'] });
}
