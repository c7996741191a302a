// Read-your-writes across nodes and clients (PostgreSQL with replicas). A write's answer names the
// WAL position of its commit (core/operations/contract.ts); a recall given that position is served
// by a replica only once the replica has replayed past it (else by the primary), on whichever node
// it lands. The caller hands it back beside the input, not in it, so the JSON keeps exactly the
// spec's shape: over REST in the Memory-Position header, over MCP in the call's `_meta`.
import type { Config } from '../shared/config.js';
import { fail } from '../shared/errors.js';
import { parseWalPosition } from '../shared/wal-position.js';

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
