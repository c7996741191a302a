// PostgreSQL text cannot hold U+0000 (NUL); SQLite text can. So on PostgreSQL no stored name or
// id contains one, and a lookup by a key that does finds nothing: the read side answers as
// SQLite answers for an unknown key (not found, an empty list) instead of sending PostgreSQL a
// parameter it refuses (SQLSTATE 22021, which would surface as a 5xx).

/** Whether PostgreSQL could hold this text (no U+0000 in it). */
export function storableText(text: string): boolean {
  return !text.includes('\u0000');
}
