// What `nearest` (read-port.ts) promises of its candidates, on either backend: cosine
// similarity as the score, nothing fainter than WEAK_SIMILARITY, and faint or distant ones
// marked weak (see the SQLite signal's notes, sqlite/vectors.ts).
import type { Proposal } from './candidates.js';

/** Faintest similarity still worth proposing (as a weak candidate). */
export const WEAK_SIMILARITY = 0.15;

/** A strong neighbour must also be at least this fraction as similar as the best one. */
export const RELATIVE_SIMILARITY = 0.75;

/** Marks neighbours (nearest first, score = cosine) below the calibrated floor, or far from the best match, as weak. */
export function graded(neighbours: { rowid: number; score: number }[], minSimilarity: number): Proposal[] {
  if (neighbours.length === 0) return [];
  const strongFloor = Math.max(minSimilarity, neighbours[0].score * RELATIVE_SIMILARITY);
  return neighbours.map((n) => ({ rowid: n.rowid, score: n.score, weak: n.score < strongFloor }));
}
