// Small text helpers shared by the writer (de-duplication) and the pool (query building).

/** Case-, space- and end-punctuation-insensitive key, used to spot a fact stored twice. */
export function contentKey(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim().replace(/[.!?;,\s]+$/u, '');
}

/** ISO 8601 with an explicit +00:00 offset (the spec asks for an offset, not a bare Z). */
export function isoWithOffset(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+00:00');
}
