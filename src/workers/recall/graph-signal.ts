// The entity graph: memories linked to the entities a query names (as owner, participant or
// mention), then memories of entities one hop away (sharing an episode with them). Every
// direct link ranks before every one-hop link, so the one-hop query only runs when the
// direct links leave room under the depth (it is the costly one: a talkative entity shares
// episodes with many others). CROSS JOINs fix the join order: from the few linked rows to
// memories, never a scan of the namespace's memories checking each for a link.
import type { Db } from '../../shared/db.js';
import { FILTER_SQL, filterParams, type Proposal, type RecallContext, type RetrievalSignal } from './signals.js';

export class GraphSignal implements RetrievalSignal {
  readonly name = 'graph';
  private readonly direct;
  private readonly oneHop;

  constructor(db: Db, private readonly namespaceId: number, readonly weight = 0.6) {
    this.direct = db.prepare<Record<string, unknown>, { rowid: number }>(`
      WITH linked(memory_rowid, relation_rank) AS (
        SELECT memory_rowid, CASE relation WHEN 'owner' THEN 0 WHEN 'mention' THEN 1 ELSE 2 END
          FROM memory_entities WHERE entity_id IN (SELECT value FROM json_each(@seeds))
      )
      SELECT m.rowid AS rowid FROM linked CROSS JOIN memories m ON m.rowid = linked.memory_rowid
      WHERE ${FILTER_SQL}
      GROUP BY m.rowid
      ORDER BY min(linked.relation_rank), m.last_access_at DESC
      LIMIT @depth`);
    this.oneHop = db.prepare<Record<string, unknown>, { rowid: number }>(`
      WITH seeds(entity_id) AS (SELECT value FROM json_each(@seeds)),
      neighbours(entity_id) AS MATERIALIZED (
        SELECT DISTINCT p2.entity_id FROM seeds
        CROSS JOIN episode_participants p1 ON p1.entity_id = seeds.entity_id
        CROSS JOIN episode_participants p2 ON p2.episode_id = p1.episode_id
        WHERE p2.entity_id NOT IN (SELECT entity_id FROM seeds)
      )
      SELECT m.rowid AS rowid FROM neighbours
      CROSS JOIN memory_entities l ON l.entity_id = neighbours.entity_id
      CROSS JOIN memories m ON m.rowid = l.memory_rowid
      WHERE l.relation = 'owner' AND ${FILTER_SQL}
        AND m.rowid NOT IN (SELECT value FROM json_each(@direct))
      GROUP BY m.rowid
      ORDER BY m.last_access_at DESC
      LIMIT @depth`);
  }

  retrieve(ctx: RecallContext): Proposal[] {
    if (ctx.queryEntityIds.length === 0) return [];
    const params = { ...filterParams(this.namespaceId, ctx.filter), seeds: JSON.stringify(ctx.queryEntityIds), depth: ctx.depth };
    const direct = this.direct.all(params);
    if (direct.length >= ctx.depth) return direct;
    const hop = this.oneHop.all({ ...params, depth: ctx.depth - direct.length, direct: JSON.stringify(direct.map((p) => p.rowid)) });
    return [...direct, ...hop];
  }
}
