// A memory's length in tokens, as FTS5 stores it: memories_fts_docsize.sz holds one varint per
// column (SQLite's varint: big-endian groups of 7 bits, the high bit set on every byte but the
// last). BM25 needs it per namespace (average length), so it is read twice: by the triggers
// that keep namespace_text_stats (SQL, migration 8) and by the reader scoring a row (JS).

/** memories_fts has two columns: content and context (migration 6). */
const COLUMNS = 2;
/** A column's size needs at most 3 varint bytes: MAX_CONTENT_LENGTH (100,000) < 2^21 tokens. */
const MAX_VARINT_BYTES = 3;

/** The total tokens (all columns) of a docsize blob. */
export function docSizeTokens(sz: Uint8Array): number {
  let total = 0;
  let value = 0;
  for (const byte of sz) {
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) {
      total += value;
      value = 0;
    }
  }
  return total;
}

/**
 * A SQL expression of the total tokens of a docsize blob, given `hex` an expression of its
 * upper-case hex text (triggers cannot call JavaScript, and SQLite has no byte function).
 * Migration 8 only: hex() of the whole blob is computed again for every byte read, which made
 * the triggers cost each write several microseconds; later triggers use docSizeBlobTokensSql.
 */
export function docSizeTokensSql(hex: string): string {
  return tokensSql((p) =>
    `(instr('0123456789ABCDEF', substr(${hex}, ${2 * p + 1}, 1)) * 16 + instr('0123456789ABCDEF', substr(${hex}, ${2 * p + 2}, 1)) - 17)`);
}

/** Every byte value in order: a byte's position in it, less one, is its value. */
const BYTE_VALUES = `X'${Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0')).join('')}'`;

/**
 * The same, given `blob` an expression of the docsize blob itself: each of the bytes a count can
 * need is read once, by its position in BYTE_VALUES (instr compares blobs byte by byte), and the
 * varint arithmetic runs over those. Past the blob's end substr gives an empty blob, which instr
 * finds at 1: byte 0, as in the hex form. `from` names where `blob` comes from (a FROM clause
 * with its WHERE), or is empty when `blob` is a value.
 */
export function docSizeBlobTokensSql(blob: string, from = ''): string {
  const bytes = Array.from({ length: COLUMNS * MAX_VARINT_BYTES },
    (_, p) => `instr(${BYTE_VALUES}, substr(${blob}, ${p + 1}, 1)) - 1 AS b${p}`);
  return `(SELECT ${tokensSql((p) => `b${p}`)} FROM (SELECT ${bytes.join(', ')} ${from}))`;
}

/** The varint arithmetic over `byte`, an SQL expression of the blob's p-th byte (0-based). */
function tokensSql(byte: (p: number) => string): string {
  // The varint starting at byte p, and its length.
  const varint = (p: number) => `(CASE WHEN ${byte(p)} < 128 THEN ${byte(p)}
      WHEN ${byte(p + 1)} < 128 THEN (${byte(p)} - 128) * 128 + ${byte(p + 1)}
      ELSE ((${byte(p)} - 128) * 128 + ${byte(p + 1)} - 128) * 128 + ${byte(p + 2)} END)`;
  // Columns after the first start where the previous one ended; a start is spelled as every
  // possible offset (1..3 bytes per earlier column), chosen by the earlier bytes.
  const columnAt = (column: number, start: number): string => {
    if (column === COLUMNS) return '0';
    const next = (length: number) => columnAt(column + 1, start + length);
    const rest = `(CASE WHEN ${byte(start)} < 128 THEN ${next(1)} WHEN ${byte(start + 1)} < 128 THEN ${next(2)} ELSE ${next(MAX_VARINT_BYTES)} END)`;
    return column + 1 === COLUMNS ? varint(start) : `(${varint(start)} + ${rest})`;
  };
  return columnAt(0, 0);
}
