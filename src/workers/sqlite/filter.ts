// What every SQLite candidate query shares: the filter (namespace, active only, types, entity)
// as SQL with its parameters, and the entity-size count that chooses between walking an
// entity's links and filtering the namespace (PostgreSQL's: postgres/filter.ts).
import type { Db } from '../../shared/db.js';
import { LARGE_ENTITY, type CandidateFilter, type Proposal, type RecallContext } from '../port/candidates.js';

/** A SQLite retrieval signal (lexical.ts, vectors.ts): candidates, best first; empty when it has nothing to say. */
export interface RetrievalSignal {
  readonly name: string;
  retrieve(ctx: RecallContext): Proposal[];
}

/** The SQL that every candidate query shares: namespace, active only, types and entity filters. */
export const FILTER_SQL = `m.namespace_id = @ns AND m.archived = 0
  AND (@types IS NULL OR m.memory_type IN (SELECT value FROM json_each(@types)))
  AND (@entity IS NULL OR EXISTS (SELECT 1 FROM memory_entities fe
        WHERE fe.memory_rowid = m.rowid AND fe.entity_id = @entity AND fe.relation IN ('owner', 'participant')))`;
// (EXISTS, a key lookup per row: an IN list would be built from all of the entity's links,
// every query, and a one-user store's user owns every memory.)

/** Counts an entity's memories (owner or participant), stopping at LARGE_ENTITY + 1. */
export function entitySize(db: Db): (entityId: string) => number {
  const count = db.prepare<[string, number], number>(`SELECT count(*) FROM (SELECT 1 FROM memory_entities
    WHERE entity_id = ? AND relation IN ('owner', 'participant') LIMIT ?)`).pluck();
  return (entityId) => count.get(entityId, LARGE_ENTITY + 1)!;
}

export function filterParams(namespaceId: number, filter: CandidateFilter) {
  return { ns: namespaceId, types: filter.types ? JSON.stringify(filter.types) : null, entity: filter.entityId };
}

