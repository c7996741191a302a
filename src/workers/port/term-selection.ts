// Low-IDF term elimination, shared by both lexical adapters (SQLite FTS5, PostgreSQL tsvector):
// ranking scores every row the query matches, so the terms join the query rarest first while
// their matches stay within a budget, and the commonest are left out. A row matching only a
// common term ranks below the rarer terms' rows anyway, since relevance weighs a term by its
// rarity; the caller fills up with the left-out terms' rows when the rarer ones bring too few.

/** Most rows one query ranks (≈ 4 ms of FTS5 bm25, ≈ 14 ms of ts_rank_cd). */
export const MATCH_BUDGET = 4000;

export interface CountedTerm {
  term: string;
  /** Rows the term matches, counted up to MATCH_BUDGET + 1. */
  matches: number;
}

/**
 * Terms for the query, rarest first, while their matches stay within budget (at least one);
 * `left` are the commoner ones. Terms matching nothing are dropped: they would only crowd out.
 */
export function selectTerms(terms: string[], counted: CountedTerm[]): { kept: string[]; left: string[] } {
  const matching = counted.filter((term) => term.matches > 0).sort((a, b) => a.matches - b.matches);
  if (matching.length === 0) return { kept: terms.slice(0, 1), left: [] };
  let matches = matching[0].matches;
  let n = 1;
  while (n < matching.length && matches + matching[n].matches <= MATCH_BUDGET) matches += matching[n++].matches;
  return { kept: matching.slice(0, n).map((t) => t.term), left: matching.slice(n).map((t) => t.term) };
}
