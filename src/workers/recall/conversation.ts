// Conversation context. A question and its answer are often split across two turns ("Where
// did you go?" / "Lisbon, finally!"), and the turn that matches a query is often next to the
// one that answers it. So a turn's score is lifted by a fraction of its best neighbour's (the
// turn before or after it in the same episode), and the neighbours of the best candidates
// join the candidates, even when no signal proposed them. (The previous turn's words are
// also indexed with each turn, as a down-weighted FTS column: see migration 6.)
import type { Db } from '../../shared/db.js';
import type { CandidateRow } from '../port/candidates.js';
import type { CandidateFilter } from '../port/candidates.js';
import { FILTER_SQL, filterParams } from '../sqlite/filter.js';

export class TurnNeighbours {
  private readonly adjacentRows;

  constructor(db: Db, private readonly namespaceId: number) {
    // By the (episode_id, seq) index, from each given turn to the turns on either side of it.
    this.adjacentRows = db.prepare<Record<string, unknown>, number>(`
      SELECT DISTINCT m.rowid FROM json_each(@rowids) j
      CROSS JOIN memories t ON t.rowid = j.value
      CROSS JOIN memories m ON m.episode_id = t.episode_id AND m.seq IN (t.seq - 1, t.seq + 1)
      WHERE t.memory_type = 'episodic' AND t.episode_id IS NOT NULL AND m.memory_type = 'episodic' AND ${FILTER_SQL}`).pluck();
  }

  /** Row ids of the episodic turns adjacent to these, passing the filter (may include the given ones). */
  adjacent(rowids: number[], filter: CandidateFilter): number[] {
    if (rowids.length === 0) return [];
    return this.adjacentRows.all({ rowids: JSON.stringify(rowids), ...filterParams(this.namespaceId, filter) });
  }
}

/** score + weight × the best score among the memory's adjacent turns (0 when it has none scored). */
export function liftedByNeighbours(rows: Map<number, CandidateRow>, scores: Map<number, number>, weight: number): Map<number, number> {
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
      best = Math.max(byPosition.get(position(row.episode_id, row.seq - 1)) ?? 0, byPosition.get(position(row.episode_id, row.seq + 1)) ?? 0);
    }
    lifted.set(rowid, score + weight * best);
  }
  return lifted;
}
