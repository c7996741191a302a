// PostgreSQL WAL positions as the service passes them around (read-your-writes across nodes and
// clients): pg_lsn text, two hexadecimal halves of up to 8 digits each, 'X/Y' — the form
// pg_lsn accepts and prints. Compared as the 64-bit numbers they stand for, never as strings
// ('0/9' is behind '0/10'). Plain functions without dependencies: the client library loads this.

/** The response header a write answers with, and the request header a recall accepts. */
export const POSITION_HEADER = 'Memory-Position';

/** The MCP `_meta` key: on a write tool's result, and in a recall tool call's `_meta`. */
export const POSITION_META_KEY = 'memory-runtime/position';

/**
 * What a recall carries instead of a position when it must read the primary: this node
 * committed a write whose position it could not read, so no replica is known to have it.
 * Never a valid pg_lsn, so it cannot be mistaken for one.
 */
export const READ_PRIMARY = 'primary';

/** pg_lsn text as a regular expression's source (the OpenAPI document states it too). */
export const WAL_POSITION_PATTERN = '^([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})$';
const LSN = new RegExp(WAL_POSITION_PATTERN);

/** The position as a number, or null when `text` is not pg_lsn text. */
export function parseWalPosition(text: string): bigint | null {
  const match = LSN.exec(text);
  if (!match) return null;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** Negative, zero or positive as `a` is behind, at or past `b` (both pg_lsn text). */
export function compareWalPositions(a: string, b: string): number {
  const x = parseWalPosition(a);
  const y = parseWalPosition(b);
  if (x === null || y === null) throw new TypeError(`not a WAL position: ${x === null ? a : b}`);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The further of two positions, either of which may be absent (absent: nothing to wait for). */
export function furthestWalPosition(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return compareWalPositions(a, b) >= 0 ? a : b;
}
