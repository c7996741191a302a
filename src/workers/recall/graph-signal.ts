// The entity graph: memories linked to the entities a query names (as owner, participant or
// mention), then memories of entities one hop away (sharing an episode with them).
import type { Db } from '../../shared/db.js';
import { FILTER_SQL, filterParams, type Proposal, type RecallContext, type RetrievalSignal } from './signals.js';

export class GraphSignal implements RetrievalSignal {
  readonly name = 'graph';
  private readonly linked;

  constructor(db: Db, private readonly namespaceId: number, readonly weight = 0.6) {
    this.linked = db.prepare<Record<string, unknown>, { rowid: number }>(`
      WITH seeds(entity_id) AS (SELECT value FROM json_each(@seeds)),
      neighbours(entity_id) AS (
        SELECT DISTINCT p2.entity_id FROM episode_participants p1
        JOIN episode_participants p2 ON p2.episode_id = p1.episode_id
        WHERE p1.entity_id IN (SELECT entity_id FROM seeds) AND p2.entity_id NOT IN (SELECT entity_id FROM seeds)
      ),
      linked(memory_rowid, hop, relation_rank) AS (
        SELECT memory_rowid, 0, CASE relation WHEN 'owner' THEN 0 WHEN 'mention' THEN 1 ELSE 2 END
          FROM memory_entities WHERE entity_id IN (SELECT entity_id FROM seeds)
        UNION ALL
        SELECT memory_rowid, 1, 3 FROM memory_entities
          WHERE entity_id IN (SELECT entity_id FROM neighbours) AND relation = 'owner'
      )
      SELECT m.rowid AS rowid FROM linked JOIN memories m ON m.rowid = linked.memory_rowid
      WHERE ${FILTER_SQL}
      GROUP BY m.rowid
      ORDER BY min(linked.hop), min(linked.relation_rank), m.last_access_at DESC
      LIMIT @depth`);
  }

  retrieve(ctx: RecallContext): Proposal[] {
    if (ctx.queryEntityIds.length === 0) return [];
    return this.linked.all({ ...filterParams(this.namespaceId, ctx.filter), seeds: JSON.stringify(ctx.queryEntityIds), depth: ctx.depth });
  }
}
