// Entity links for recall on SQLite: the members of entities with few memories (candidates of
// their own) and which candidates link an entity the query names (the prior, recall/entity-prior.ts).
import type { Db } from '../../shared/db.js';
import { prepareOnce } from '../../shared/connection-statements.js';
import { statementPerLimits } from '../../shared/literal-statements.js';
import type { CandidateFilter } from '../port/candidates.js';
import { FILTER_SQL, filterParams } from './filter.js';

export class EntityLinks {
  private readonly linkedRows;
  private readonly fewMembers;
  private readonly aboutRows;

  constructor(db: Db, private readonly namespaceId: number) {
    // The depth spelled in (shared/literal-statements.ts): a bound LIMIT re-prepares every run.
    this.fewMembers = statementPerLimits<Record<string, unknown>, number>(db, (depth, beyond) => `
      SELECT DISTINCT m.rowid FROM json_each(@seeds) s
      CROSS JOIN memory_entities e ON e.entity_id = s.value
      CROSS JOIN memories m ON m.rowid = e.memory_rowid
      WHERE (SELECT count(*) FROM (SELECT DISTINCT x.memory_rowid FROM memory_entities x WHERE x.entity_id = s.value LIMIT ${beyond})) <= ${depth}
        AND ${FILTER_SQL}
      LIMIT ${depth}`, { pluck: true });
    // (DISTINCT: a memory can link an entity twice, as participant and as mention; "few" counts
    // memories. LIMIT: a query can name hundreds of entities, each "few"; together they bring at most
    // `depth` members, else one request could pull 100k+ candidates into every later stage.)
    // (memory_rowid, …) is the key's prefix: one seek per candidate.
    this.linkedRows = prepareOnce<[string, string], number>(db, `
      SELECT DISTINCT e.memory_rowid FROM json_each(?) j
      CROSS JOIN memory_entities e ON e.memory_rowid = j.value
      WHERE e.entity_id IN (SELECT value FROM json_each(?))`, 'pluck');
    this.aboutRows = prepareOnce<[string, string], number>(db, `
      SELECT DISTINCT e.memory_rowid FROM json_each(?) j
      CROSS JOIN memory_entities e ON e.memory_rowid = j.value
      WHERE e.entity_id IN (SELECT value FROM json_each(?)) AND e.relation IN ('owner', 'mention')`, 'pluck');
  }

  /** Every memory of those entities that have at most `depth` links (passing the filter). */
  membersOfFew(entityIds: string[], depth: number, filter: CandidateFilter): number[] {
    if (entityIds.length === 0) return [];
    return this.fewMembers(depth, depth + 1).all({ seeds: JSON.stringify(entityIds), ...filterParams(this.namespaceId, filter) });
  }

  /** The memories among these that link one of the entities. */
  linked(rowids: number[], entityIds: string[]): Set<number> {
    if (rowids.length === 0 || entityIds.length === 0) return new Set();
    return new Set(this.linkedRows.all(JSON.stringify(rowids), JSON.stringify(entityIds)));
  }

  /** The memories among these that are by or about one of the entities (owner or mention, not participant). */
  about(rowids: number[], entityIds: string[]): Set<number> {
    if (rowids.length === 0 || entityIds.length === 0) return new Set();
    return new Set(this.aboutRows.all(JSON.stringify(rowids), JSON.stringify(entityIds)));
  }
}
