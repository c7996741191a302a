// The turns next to a recall's best candidates (same episode, seq ± 1): the SQLite side of the
// conversation lift (recall/conversation.ts), read by the port's `adjacent`.
import type { Db } from '../../shared/db.js';
import { prepareOnce } from '../../shared/connection-statements.js';
import type { CandidateFilter } from '../port/candidates.js';
import { FILTER_SQL, filterParams } from './filter.js';

export class TurnNeighbours {
  private readonly adjacentRows;

  constructor(db: Db, private readonly namespaceId: number) {
    // By the (episode_id, seq) index, from each given turn to the turns on either side of it.
    // Named: the planner otherwise picks memories_by_namespace for the filter's terms and walks
    // every episodic memory of the namespace once per given turn (27 ms for 30 turns at 20k
    // memories, 70 µs this way).
    this.adjacentRows = prepareOnce<Record<string, unknown>, number>(db, `
      SELECT DISTINCT m.rowid FROM json_each(@rowids) j
      CROSS JOIN memories t ON t.rowid = j.value
      CROSS JOIN memories m INDEXED BY memories_by_episode ON m.episode_id = t.episode_id AND m.seq BETWEEN t.seq - @reach AND t.seq + @reach AND m.seq != t.seq
      WHERE t.memory_type = 'episodic' AND t.episode_id IS NOT NULL AND m.memory_type = 'episodic' AND ${FILTER_SQL}`, 'pluck');
  }

  /** Row ids of the episodic turns adjacent to these, passing the filter (may include the given ones). */
  adjacent(rowids: number[], filter: CandidateFilter, reach = 1): number[] {
    if (rowids.length === 0) return [];
    return this.adjacentRows.all({ rowids: JSON.stringify(rowids), reach, ...filterParams(this.namespaceId, filter) });
  }
}
