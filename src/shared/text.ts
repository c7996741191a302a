// Small text helpers shared by the writer (de-duplication) and the pool (query building).

/** Case-, space- and end-punctuation-insensitive key, used to spot a fact stored twice. */
export function contentKey(text: string): string {
  // ASCII is its own NFKC form, and most texts are ASCII: ICU's normalisation costs more than
  // the rest of a write's rule, so it runs only where it can change something.
  const normalised = ASCII_ONLY.test(text) ? text : text.normalize('NFKC');
  return normalised.toLowerCase().replace(/\s+/g, ' ').trim().replace(/[.!?;,\s]+$/u, '');
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** ISO 8601 with an explicit +00:00 offset (the spec asks for an offset, not a bare Z). */
export function isoWithOffset(ms: number): string {
  // toISOString always ends in its one Z.
  return `${new Date(ms).toISOString().slice(0, -1)}+00:00`;
}
