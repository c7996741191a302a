// Dense session evidence: a session (episode) as one vector — the mean of its turns' unit
// vectors — scored against the query. A session about the question's topic holds answers
// that share no word with the question and resemble it little turn by turn ("I took the kids
// camping" for "what does she do with her family?"), while the session as a whole does.
import { norm } from './dense-feedback.js';

/** Cosine of the query to the centroid of each group's unit vectors. */
export function centroidSimilarities(query: Float32Array, groups: Map<string, Float32Array[]>): Map<string, number> {
  const scores = new Map<string, number>();
  const queryNorm = norm(query) || 1;
  for (const [group, vectors] of groups) {
    const centroid = new Float32Array(query.length);
    for (const vector of vectors) {
      const length = norm(vector) || 1;
      for (let i = 0; i < centroid.length; i++) centroid[i] += (vector[i] ?? 0) / length;
    }
    const length = norm(centroid);
    let dot = 0;
    for (let i = 0; i < centroid.length; i++) dot += centroid[i] * query[i];
    scores.set(group, length > 0 ? dot / (length * queryNorm) : 0);
  }
  return scores;
}

/** Each group's score min-max scaled to [0, 1] over the groups (all 1 when they are equal). */
export function scaled(scores: Map<string, number>): Map<string, number> {
  let low = Infinity;
  let high = -Infinity;
  for (const s of scores.values()) {
    low = Math.min(low, s);
    high = Math.max(high, s);
  }
  return new Map([...scores].map(([group, s]) => [group, high > low ? (s - low) / (high - low) : 1]));
}
