// Pseudo-relevance feedback: the best few results of a first ranking say more about what the
// question is after than the question's own few words. Two forms, each a separate stage:
// - dense (Rocchio): the query vector moves towards the mean of the best results' vectors, so
//   turns that resemble the answers found so far are found too ("camping", "the beach" for a
//   question about a person's trips, once one trip is found);
// - lexical (RM3-style): the terms that recur across the best results and are not in the query
//   are added to a second lexical pass; the lexical index weighs each by its rarity (BM25 idf),
//   and its commonest terms are left out by the usual term selection (term-selection.ts).
import { contentWords } from './query-text.js';

/** normalise(query + beta × mean of the unit-length feedback vectors); the query itself when there are none. */
export function feedbackVector(query: Float32Array, feedback: Float32Array[], beta: number): Float32Array {
  if (feedback.length === 0 || beta <= 0) return query;
  const moved = Float32Array.from(query);
  for (const vector of feedback) {
    let norm = 0;
    for (let i = 0; i < vector.length; i++) norm += vector[i] * vector[i];
    const scale = norm > 0 ? beta / (feedback.length * Math.sqrt(norm)) : 0;
    for (let i = 0; i < moved.length; i++) moved[i] += scale * (vector[i] ?? 0);
  }
  let norm = 0;
  for (let i = 0; i < moved.length; i++) norm += moved[i] * moved[i];
  if (norm === 0) return query;
  const inverse = 1 / Math.sqrt(norm);
  for (let i = 0; i < moved.length; i++) moved[i] *= inverse;
  return moved;
}

/**
 * Up to `count` terms for the second lexical pass: content words (stopwords dropped, as for a
 * query) of the feedback texts that are not already query terms, by how many of the texts hold
 * them (a term that recurs across the best results is about the topic, one that occurs once is
 * about its own turn), then by first occurrence. A term in only one text is never taken.
 */
export function expansionTerms(texts: string[], query: string[], count: number): string[] {
  const asked = new Set(query);
  const documents = new Map<string, number>();
  const first = new Map<string, number>();
  let position = 0;
  for (const text of texts) {
    for (const term of contentWords(text)) {
      if (asked.has(term) || term.length < 3 || /^\p{N}+$/u.test(term)) continue;
      documents.set(term, (documents.get(term) ?? 0) + 1);
      if (!first.has(term)) first.set(term, position++);
    }
  }
  return [...documents].filter(([, n]) => n >= 2)
    .sort((a, b) => b[1] - a[1] || first.get(a[0])! - first.get(b[0])!)
    .slice(0, count).map(([term]) => term);
}
