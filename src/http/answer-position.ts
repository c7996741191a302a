// Read-your-writes across nodes and clients (PostgreSQL with replicas). A write's answer names the
// WAL position of its commit; a recall given that position is served by a replica only once the
// replica has replayed past it (else by the primary), on whichever node it lands. The position
// travels beside the result, not in it, so the JSON keeps exactly the spec's shape: REST carries
// it in the Memory-Position header, MCP in `_meta` (as truncation.ts does for its flag).
import type { Config } from '../shared/config.js';
import { fail } from '../shared/errors.js';
import { parseWalPosition } from '../shared/wal-position.js';

const positions = new WeakMap<object, string>();

/** `result`, marked with the position of the commit that stored it (none: nothing to mark). */
export function withPosition<T extends object>(result: T, position: string | undefined): T {
  if (position !== undefined) positions.set(result, position);
  return result;
}

/** The position a write's result was marked with. */
export function positionOf(result: unknown): string | undefined {
  return typeof result === 'object' && result !== null ? positions.get(result) : undefined;
}

/**
 * A caller's position (`field` names where it came from, for the error): undefined when absent
 * (an empty header, a null `_meta` value), else pg_lsn text — anything else is 400
 * INVALID_VALUE, never passed on to SQL.
 */
export function callerPosition(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string' && parseWalPosition(value) !== null) return value;
  throw fail.invalidPosition(field);
}

/** Reads a caller's position from where `field` names: a value or nothing, or 400. */
export type PositionReader = (value: unknown, field: string) => string | undefined;

/**
 * How the surfaces read a caller's position on this backend. SQLite has no replicas and its
 * writes name no position, so there the header and `_meta` key mean nothing: ignored unread
 * (the spec lists no error for them), as any unknown header. PostgreSQL validates them.
 */
export function positionReader(config: Pick<Config, 'postgres'>): PositionReader {
  return config.postgres ? callerPosition : ignored;
}

const ignored: PositionReader = () => undefined;
