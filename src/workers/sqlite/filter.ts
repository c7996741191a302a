// What every SQLite candidate query shares: the filter (namespace, active only, types, entity, time)
// as SQL with its parameters, and the entity-size count that chooses between walking an
// entity's links and filtering the namespace (PostgreSQL's: postgres/filter.ts).
import type { Db } from '../../shared/db.js';
import { prepareOnce } from '../../shared/connection-statements.js';
import { LARGE_ENTITY, validNow, type CandidateFilter, type Proposal, type RecallContext } from '../port/candidates.js';

/** A SQLite retrieval signal (lexical.ts, vectors.ts): candidates, best first; empty when it has nothing to say. */
export interface RetrievalSignal {
  readonly name: string;
  retrieve(ctx: RecallContext): Proposal[];
}

/**
 * Valid at @valid_at (unless @all_versions), occurred by @as_of and within [@since, @until], and
 * of the time the query speaks of, [@during_from, @during_to]: a fact valid at some moment of it,
 * anything else said or done in it (docs/time.md).
 */
export const TIME_FILTER_SQL = `(@all_versions OR m.valid_until IS NULL OR m.valid_until > @valid_at)
  AND (@as_of IS NULL OR m.occurred_at <= @as_of)
  AND (@since IS NULL OR m.occurred_at >= @since)
  AND (@until IS NULL OR m.occurred_at <= @until)
  AND (@during_from IS NULL OR (m.occurred_at <= @during_to AND (m.valid_until IS NULL OR m.valid_until > @during_from)
    AND (m.memory_type = 'semantic' OR m.occurred_at >= @during_from)))`;
/** The SQL that every candidate query shares: namespace, active only, types, entity and time filters. */
export const FILTER_SQL = `m.namespace_id = @ns AND m.archived = 0
  AND (@types IS NULL OR m.memory_type IN (SELECT value FROM json_each(@types)))
  AND ${TIME_FILTER_SQL}
  AND (@entity IS NULL OR EXISTS (SELECT 1 FROM memory_entities fe
        WHERE fe.memory_rowid = m.rowid AND fe.entity_id = @entity AND fe.relation IN ('owner', 'participant')))`;
// (EXISTS, a key lookup per row: an IN list would be built from all of the entity's links,
// every query, and a one-user store's user owns every memory.)

/** Counts an entity's memories (owner or participant), stopping at LARGE_ENTITY + 1. */
export function entitySize(db: Db): (entityId: string) => number {
  // The bound spelled in: a bound LIMIT makes SQLite prepare the statement again on every run.
  const count = prepareOnce<[string], number>(db, `SELECT count(*) FROM (SELECT 1 FROM memory_entities
    WHERE entity_id = ? AND relation IN ('owner', 'participant') LIMIT ${LARGE_ENTITY + 1})`, 'pluck');
  return (entityId) => count.get(entityId)!;
}

export function filterParams(namespaceId: number, filter: CandidateFilter) {
  const time = filter.time ?? validNow();
  return {
    ns: namespaceId, types: filter.types ? JSON.stringify(filter.types) : null, entity: filter.entityId,
    // A window replaces "valid now": what held then counts, whatever replaced it since.
    valid_at: time.validAt, as_of: time.asOf ? time.validAt : null, all_versions: time.allVersions || time.during ? 1 : 0,
    since: time.since, until: time.until, during_from: time.during?.from ?? null, during_to: time.during?.to ?? null,
  };
}

