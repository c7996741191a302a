// Turning a query's terms into a safe FTS5 query. Every term is a quoted string of letters and
// digits only (recall/query-text.ts), OR-joined, so quotes, operators (AND, NEAR, *, ^, :),
// brackets and punctuation in the input can never reach FTS5's query parser.

/** An FTS5 MATCH expression for the terms, or null when there is nothing to match. */
export function ftsMatchExpression(terms: string[]): string | null {
  if (terms.length === 0) return null;
  return terms.map((term) => `"${term.replace(/"/g, '""')}"`).join(' OR ');
}
