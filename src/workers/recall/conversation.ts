// Conversation context. A question and its answer are often split across turns ("Where did you
// go?" / "Lisbon, finally!"), and a turn that matches a query is often next to the one that
// answers it. So a turn's score is lifted by a fraction of the best score among the turns at
// most `reach` before or after it in the same episode (NEIGHBOUR_REACH: the adjacent ones), and
// the near turns of the best candidates join the candidates, even when no signal proposed them.
// The lift is bounded (one fraction of one neighbour's score, never a sum over the window) and
// does not chain (it reads the fused scores, not lifted ones). (The previous turn's words are
// also indexed with each turn, as a down-weighted FTS column: see migration 6.)
import type { CandidateRow } from '../port/candidates.js';

/**
 * How many turns away a neighbour lifts a turn. Reach 2 (the same speaker's turn on the far side
 * of the other's reply) gains on LoCoMo but loses on the synthetic corpus, both seeds
 * (docs/recall-quality.md, "Turn neighbourhood"): the adjacent turns only.
 */
export const NEIGHBOUR_REACH = 1;

/** score + weight × the best score among the memory's turns at most `reach` away (0 when none is scored). */
export function liftedByNeighbours(rows: Map<number, CandidateRow>, scores: Map<number, number>, weight: number,
  reach = NEIGHBOUR_REACH): Map<number, number> {
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
      for (let d = 1; d <= reach; d++) {
        best = Math.max(best, byPosition.get(position(row.episode_id, row.seq - d)) ?? 0, byPosition.get(position(row.episode_id, row.seq + d)) ?? 0);
      }
    }
    lifted.set(rowid, score + weight * best);
  }
  return lifted;
}
