// What the read port's candidate reads take and give (RecallReads, read-port.ts): one recall's
// filter and context, the candidates a retrieval proposes from the whole namespace with its raw
// score, and what ranking reads of each; fusion (recall/fuse.ts) combines the scores.
import type { MemoryType } from '../../shared/schemas.js';
import type { TimeFilter } from '../../shared/event-time.js';
import type { MemoryRow } from './rows.js';
import type { SharedCodesHandle } from '../../shared/protocol/pool.js';

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
  /** The shared vector codes this recall's task was lent (SQLite; absent: none). */
  codes?: RecallCodes;
}

/**
 * The shared vector codes one recall task was lent (SQLite, workers/sqlite/vector-codes.ts),
 * carried in the recall's own context and never in thread state: a thread running several
 * recalls at once (an endpoint embedder) scans, for each, the store that recall was lent, and
 * keeps no store past the task that was lent it, so the registry's budget counts every store a
 * thread can reach.
 */
export interface RecallCodes {
  /** The store the registry held for the namespace when the task was sent (null: none). */
  readonly handle: SharedCodesHandle | null;
  /** Set by the recall: the namespace is indexed and this task had no store it could scan (the registry may build one). */
  wanted?: boolean;
}

/** A candidate a signal proposes, with the signal's raw score (higher is better). */
export interface Proposal {
  rowid: number;
  score: number;
  /** A weak one survives only if the lexical signal proposes it too, or it links an entity the query names. */
  weak?: boolean;
}

/**
 * Past this many memories an entity is no longer "few": signals stop walking its links and
 * search the namespace with the entity as a filter instead.
 */
export const LARGE_ENTITY = 4000;

/** The default view: what is valid now, whenever it occurred. */
export function validNow(now = Date.now()): TimeFilter {
  return { validAt: now, asOf: false, allVersions: false, since: null, until: null };
}

/** The columns ranking reads of every candidate (no content: that is read for the returned few). */
export type CandidateRow = Pick<MemoryRow, 'rowid' | 'memory_type' | 'episode_id' | 'seq' | 'confidence' | 'created_at'>;
