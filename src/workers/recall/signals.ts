// Recall signals. A *retrieval* signal proposes scored candidates from the whole namespace
// (honouring the filter); fusion (fuse.ts) combines the scores of every candidate.
import type { Db } from '../../shared/db.js';
import type { MemoryType } from '../../shared/schemas.js';
import type { MemoryRow } from '../read-store.js';
import type { TimeFilter } from '../../shared/event-time.js';

export interface CandidateFilter {
  entityId: string | null;
  types: MemoryType[] | null;
  /** Which memories are valid when (docs/time.md); absent: those valid now. */
  time?: TimeFilter;
}

export type { TimeFilter };

export interface RecallContext {
  query: string;
  terms: string[];
  /** Unit-length query embedding; null when the embedder failed (recall degrades, never errors). */
  queryVector: Float32Array | null;
  /** Entities the query text names (other than the `entity` filter). */
  queryEntityIds: string[];
  filter: CandidateFilter;
  /** How many candidates each retrieval signal may propose. */
  depth: number;
  now: number;
  /** Per-stage milliseconds: a signal may record sub-stages here (e.g. `embed`, `knn`) with timed(). */
  timings?: import('../../shared/protocol/pool.js').StageTimings;
}

/** A candidate a signal proposes, with the signal's raw score (higher is better). */
export interface Proposal {
  rowid: number;
  score: number;
  /** A weak one survives only if the lexical signal proposes it too, or it links an entity the query names. */
  weak?: boolean;
}

export interface RetrievalSignal {
  readonly name: string;
  /** Candidates, best first. An empty list means the signal has nothing to say for this query. */
  retrieve(ctx: RecallContext): Proposal[];
}

/** Valid at @valid_at (unless @all_versions), occurred by @as_of and within [@since, @until] (docs/time.md). */
export const TIME_FILTER_SQL = `(@all_versions OR m.valid_until IS NULL OR m.valid_until > @valid_at)
  AND (@as_of IS NULL OR m.occurred_at <= @as_of)
  AND (@since IS NULL OR m.occurred_at >= @since)
  AND (@until IS NULL OR m.occurred_at <= @until)`;
/** The SQL that every candidate query shares: namespace, active only, types, entity and time filters. */
export const FILTER_SQL = `m.namespace_id = @ns AND m.archived = 0
  AND (@types IS NULL OR m.memory_type IN (SELECT value FROM json_each(@types)))
  AND ${TIME_FILTER_SQL}
  AND (@entity IS NULL OR EXISTS (SELECT 1 FROM memory_entities fe
        WHERE fe.memory_rowid = m.rowid AND fe.entity_id = @entity AND fe.relation IN ('owner', 'participant')))`;
// (EXISTS, a key lookup per row: an IN list would be built from all of the entity's links,
// every query, and a one-user store's user owns every memory.)

/**
 * Past this many memories an entity is no longer "few": signals stop walking its links and
 * search the namespace with the entity as a filter instead.
 */
export const LARGE_ENTITY = 4000;

/** Counts an entity's memories (owner or participant), stopping at LARGE_ENTITY + 1. */
export function entitySize(db: Db): (entityId: string) => number {
  const count = db.prepare<[string, number], number>(`SELECT count(*) FROM (SELECT 1 FROM memory_entities
    WHERE entity_id = ? AND relation IN ('owner', 'participant') LIMIT ?)`).pluck();
  return (entityId) => count.get(entityId, LARGE_ENTITY + 1)!;
}

export function filterParams(namespaceId: number, filter: CandidateFilter) {
  const time = filter.time ?? validNow();
  return {
    ns: namespaceId, types: filter.types ? JSON.stringify(filter.types) : null, entity: filter.entityId,
    valid_at: time.validAt, as_of: time.asOf ? time.validAt : null, all_versions: time.allVersions ? 1 : 0,
    since: time.since, until: time.until,
  };
}

/** The default view: what is valid now, whenever it occurred. */
export function validNow(now = Date.now()): TimeFilter {
  return { validAt: now, asOf: false, allVersions: false, since: null, until: null };
}

/** The columns ranking reads of every candidate (no content: that is read for the returned few). */
export type CandidateRow = Pick<MemoryRow, 'rowid' | 'memory_type' | 'episode_id' | 'seq' | 'confidence' | 'created_at'>;
