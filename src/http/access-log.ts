// The access line, one per request: the same JSON line `log.info({reqId, method, route,
// status, ms}, 'request')` writes, composed here from a fixed template and handed to the
// logger's own destination. pino's generic path (a loop over the object's keys, a
// per-field stringifier lookup, its escaping scan) was ~25% of the main thread's JavaScript
// time under `GET /v1/health` load (CPU profile, bench:mixed). The fixed parts — the level
// prefix, the bindings (`"service":…`), the time format and the end of line — are taken from
// the logger itself, so a line still matches pino's byte for byte (test/access-log.test.ts).
import { pino } from 'pino';
import type { Logger } from '../shared/logger.js';

const { lsCacheSym, chindingsSym, timeSym, endSym, streamSym, messageKeySym } = pino.symbols;

// Exported by pino, missing from its type declarations.
const MSG_PREFIX = (pino.symbols as unknown as Record<string, symbol>).msgPrefixSym;

/** Anything JSON must escape (quote, backslash, control characters). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/** pino's rule (tools.js `asString`): strings over 100 characters always go through JSON.stringify, which also escapes lone surrogates. */
function quoted(value: string): string {
  return value.length > 100 || NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

/** What a logger with hooks of its own would do differently: those go through pino itself. */
function customised(log: Logger): boolean {
  const internals = log as unknown as Record<symbol, unknown>;
  const formatters = internals[pino.symbols.formattersSym] as { log?: unknown } | undefined;
  const hooks = internals[pino.symbols.hooksSym] as { streamWrite?: unknown; logMethod?: unknown } | undefined;
  const serializers = internals[pino.symbols.serializersSym] as Record<string, unknown> | undefined;
  const stream = internals[pino.symbols.streamSym] as Record<symbol | string, unknown> | undefined;
  return Boolean(
    internals[pino.symbols.mixinSym] || formatters?.log || hooks?.streamWrite || hooks?.logMethod || internals[MSG_PREFIX] ||
      internals[pino.symbols.nestedKeySym] ||
      (serializers && ['reqId', 'method', 'route', 'status', 'ms'].some((key) => key in serializers)) ||
      // A multistream picks its targets from the level of each call (pino sets it per write).
      (stream !== undefined && pino.symbols.needsMetadataGsym in stream),
  );
}

export class AccessLog {
  private readonly info: number;
  private readonly internals: Record<symbol, unknown>;
  private readonly fast: boolean;

  constructor(private readonly log: Logger) {
    this.info = log.levels.values.info;
    this.internals = log as unknown as Record<symbol, unknown>;
    this.fast = !customised(log);
  }

  /** One request's line, at `info`. Strings other than `route` are tokens, but are escaped if need be. */
  write(reqId: string | undefined, method: string, route: string, status: number, ms: number): void {
    if (!this.fast) {
      this.log.info({ reqId, method, route, status, ms }, 'request');
      return;
    }
    // pino's own test: it honours a levelComparison other than ascending.
    if (!this.log.isLevelEnabled('info')) return;
    const pieces = this.internals;
    // Read per line, as pino does: a child logger or a level change swaps them.
    const head = (pieces[lsCacheSym] as Record<number, string>)[this.info] + (pieces[timeSym] as () => string)() + (pieces[chindingsSym] as string);
    const id = reqId === undefined ? '' : `,"reqId":${quoted(reqId)}`;
    const line = `${head}${id},"method":${quoted(method)},"route":${quoted(route)},"status":${status},"ms":${Number.isFinite(ms) ? ms : null},` +
      `${quoted(pieces[messageKeySym] as string)}:"request"${pieces[endSym] as string}`;
    (pieces[streamSym] as { write(line: string): void }).write(line);
  }
}
