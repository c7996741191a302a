// Query-term coverage (set level). A question with several parts ("what did X and Y bring to the
// picnic?") is answered by a set of memories that together cover its content terms, not by ten
// memories that each match its commonest part. Two uses:
// - coverageOrder: the final top `limit` is picked greedily from a pool of the best candidates,
//   each pick gaining weight × the share of the query's terms it covers that no earlier pick did;
// - uncoveredTerms: the query terms none of the best results contain, for a second lexical probe.
// A term matches a memory's word when equal, or when both share a prefix of PREFIX characters (a
// cheap stand-in for stemming: "activities" / "activity"). A term that most of the pool contains
// (a speaker's name in every turn) tells nothing apart and is left out.
import { tokenize } from './query-text.js';

const PREFIX = 5;
/** Terms contained by more than this share of the pool are not counted. */
const COMMON_SHARE = 0.5;

const stemOf = (word: string) => (word.length >= PREFIX ? word.slice(0, PREFIX) : word);

/** The query terms this text contains. */
export function termsIn(terms: readonly string[], text: string): Set<string> {
  const words = new Set(tokenize(text).map(stemOf));
  return new Set(terms.filter((term) => words.has(stemOf(term))));
}

/** Query terms none of the texts contain (query order). */
export function uncoveredTerms(terms: readonly string[], texts: readonly string[]): string[] {
  const covered = new Set<string>();
  for (const text of texts) for (const term of termsIn(terms, text)) covered.add(term);
  return terms.filter((term) => !covered.has(term));
}

export interface Scored {
  rowid: number;
  score: number;
}

/**
 * The best `limit` of `pool` (best first by score) picked greedily: each pick maximises score +
 * weight × (the share of the telling query terms it covers that no earlier pick did). Returned
 * scores are the pool's, so the order changes but no score is invented.
 */
export function coverageOrder(pool: readonly Scored[], termsOf: ReadonlyMap<number, Set<string>>, terms: readonly string[],
  weight: number, limit: number): Scored[] {
  if (weight <= 0 || pool.length === 0) return pool.slice(0, limit);
  const telling = terms.filter((term) => {
    let n = 0;
    for (const { rowid } of pool) if (termsOf.get(rowid)?.has(term)) n++;
    return n > 0 && n <= COMMON_SHARE * pool.length;
  });
  if (telling.length < 2) return pool.slice(0, limit);
  const left = [...pool];
  const covered = new Set<string>();
  const picked: Scored[] = [];
  while (picked.length < limit && left.length > 0) {
    let best = 0;
    let bestValue = -Infinity;
    for (let i = 0; i < left.length; i++) {
      let fresh = 0;
      for (const term of termsOf.get(left[i].rowid) ?? []) if (!covered.has(term) && telling.includes(term)) fresh++;
      const value = left[i].score + (weight * fresh) / telling.length;
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    const [next] = left.splice(best, 1);
    for (const term of termsOf.get(next.rowid) ?? []) covered.add(term);
    picked.push(next);
  }
  return picked;
}
