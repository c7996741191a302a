// The one path from anything thrown to what a client may see, REST and MCP alike: an internal
// fault is logged with its cause and answered as "internal server error" (its text can name
// files or SQL); any other 5xx is logged with its reason and answered as it is; 4xx are the
// client's to fix and not logged here.
import { fail, ServiceError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';

/** `context` says where it failed (route and request id, or tool name); `what` is the log line. */
export function publicError(thrown: unknown, log: Logger, context: Record<string, unknown>, what: string): ServiceError {
  const error = ServiceError.from(thrown);
  if (error.code === 'INTERNAL') {
    log.error({ err: thrown, ...context }, what);
    return fail.internal();
  }
  if (error.status >= 500) log.error({ code: error.code, ...context, reason: error.message }, what);
  return error;
}
