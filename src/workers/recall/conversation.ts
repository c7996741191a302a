// Conversation context. A question and its answer are often split across two turns ("Where
// did you go?" / "Lisbon, finally!"), and the turn that matches a query is often next to the
// one that answers it. So a turn's score is lifted by a fraction of its best neighbour's (the
// turn before or after it in the same episode), and the neighbours of the best candidates
// join the candidates, even when no signal proposed them. (The previous turn's words are
// also indexed with each turn, as a down-weighted FTS column: see migration 6.)
import type { CandidateRow } from '../port/candidates.js';

/**
 * score + weight × the best score among the memory's adjacent turns (0 when it has none scored);
 * with `spread` > 0, a turn d ≤ reach away counts too, at weight × spread^(d−1) of its score.
 */
export function liftedByNeighbours(rows: Map<number, CandidateRow>, scores: Map<number, number>, weight: number,
  spread = 0, reach = 1): Map<number, number> {
  if (weight <= 0) return scores;
  const position = (episode: string, seq: number) => `${episode}\u0000${seq}`;
  const byPosition = new Map<string, number>();
  for (const [rowid, score] of scores) {
    const row = rows.get(rowid);
    if (row?.memory_type === 'episodic' && row.episode_id !== null && row.seq !== null) byPosition.set(position(row.episode_id, row.seq), score);
  }
  const lifted = new Map<number, number>();
  for (const [rowid, score] of scores) {
    const row = rows.get(rowid);
    let best = 0;
    if (row?.memory_type === 'episodic' && row.episode_id !== null && row.seq !== null) {
      let factor = 1;
      for (let d = 1; d <= (spread > 0 ? reach : 1); d++, factor *= spread) {
        best = Math.max(best, factor * Math.max(byPosition.get(position(row.episode_id, row.seq - d)) ?? 0, byPosition.get(position(row.episode_id, row.seq + d)) ?? 0));
      }
    }
    lifted.set(rowid, score + weight * best);
  }
  return lifted;
}
