// Entity links as a small prior, never as a ranked list of their own. A memory linked to an
// entity the query names (as owner, participant or mention) gains weight × (1 − the share of
// candidates linked to one of them): an entity that only a few candidates name tells them
// apart; one named by every candidate (both speakers of a two-person conversation are linked
// to every turn) adds nothing at all. The old graph list ordered an entity's memories by last
// access — every memory of a talkative speaker, most recently recalled first — which flooded
// the ranks and made results depend on which questions were asked before.
// An entity with few memories (at most the candidate depth) brings all of them in as
// candidates, unranked: "tell me about Zoltan" finds Zoltan's memories even when they share no
// word with the query; a talkative entity brings none (it would only be noise).
import type { Db } from '../../shared/db.js';
import type { CandidateFilter } from '../port/candidates.js';
import { FILTER_SQL, filterParams } from '../sqlite/filter.js';

export class EntityLinks {
  private readonly linkedRows;
  private readonly fewMembers;

  constructor(db: Db, private readonly namespaceId: number) {
    this.fewMembers = db.prepare<Record<string, unknown>, number>(`
      SELECT DISTINCT m.rowid FROM json_each(@seeds) s
      CROSS JOIN memory_entities e ON e.entity_id = s.value
      CROSS JOIN memories m ON m.rowid = e.memory_rowid
      WHERE (SELECT count(*) FROM (SELECT DISTINCT x.memory_rowid FROM memory_entities x WHERE x.entity_id = s.value LIMIT @depth + 1)) <= @depth
        AND ${FILTER_SQL}
      LIMIT @depth`).pluck();
    // (DISTINCT: a memory can link an entity twice, as participant and as mention; "few" counts
    // memories. LIMIT: a query can name hundreds of entities, each "few"; together they bring at most
    // `depth` members, else one request could pull 100k+ candidates into every later stage.)
    // (memory_rowid, …) is the key's prefix: one seek per candidate.
    this.linkedRows = db.prepare<[string, string], number>(`
      SELECT DISTINCT e.memory_rowid FROM json_each(?) j
      CROSS JOIN memory_entities e ON e.memory_rowid = j.value
      WHERE e.entity_id IN (SELECT value FROM json_each(?))`).pluck();
  }

  /** Every memory of those entities that have at most `depth` links (passing the filter). */
  membersOfFew(entityIds: string[], depth: number, filter: CandidateFilter): number[] {
    if (entityIds.length === 0) return [];
    return this.fewMembers.all({ seeds: JSON.stringify(entityIds), depth, ...filterParams(this.namespaceId, filter) });
  }

  /** The memories among these that link one of the entities. */
  linked(rowids: number[], entityIds: string[]): Set<number> {
    if (rowids.length === 0 || entityIds.length === 0) return new Set();
    return new Set(this.linkedRows.all(JSON.stringify(rowids), JSON.stringify(entityIds)));
  }
}

/** The prior each candidate gains (0 for unlinked ones). */
export function entityPrior(candidates: number[], linked: Set<number>, weight: number): (rowid: number) => number {
  const linkedCandidates = candidates.filter((rowid) => linked.has(rowid)).length;
  const bonus = candidates.length === 0 ? 0 : weight * (1 - linkedCandidates / candidates.length);
  return (rowid) => (linked.has(rowid) ? bonus : 0);
}
