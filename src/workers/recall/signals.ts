// Recall signals. A *retrieval* signal proposes candidates from the whole namespace
// (honouring the filter); a *rerank* signal only orders candidates others proposed. Fusion
// (fuse.ts) combines their rankings. New signals plug in by implementing one interface.
import type { Db } from '../../shared/db.js';
import { retrievability } from '../../shared/fsrs.js';
import type { MemoryType } from '../../shared/schemas.js';
import type { MemoryRow } from '../read-store.js';
import { ftsMatchExpression } from './query-text.js';

export interface CandidateFilter {
  entityId: string | null;
  types: MemoryType[] | null;
}

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
  timings?: import('../../shared/messages.js').StageTimings;
}

/** A candidate a signal proposes. A weak one survives only if another signal proposes it too. */
export interface Proposal {
  rowid: number;
  weak?: boolean;
}

export interface RetrievalSignal {
  readonly name: string;
  readonly weight: number;
  /** Candidates, best first. An empty list means the signal has nothing to say for this query. */
  retrieve(ctx: RecallContext): Proposal[];
}

export interface RerankSignal {
  readonly name: string;
  readonly weight: number;
  rank(ctx: RecallContext, candidates: MemoryRow[]): number[];
}

/** The SQL that every candidate query shares: namespace, active only, types and entity filters. */
export const FILTER_SQL = `m.namespace_id = @ns AND m.archived = 0
  AND (@types IS NULL OR m.memory_type IN (SELECT value FROM json_each(@types)))
  AND (@entity IS NULL OR m.rowid IN (SELECT memory_rowid FROM memory_entities
        WHERE entity_id = @entity AND relation IN ('owner', 'participant')))`;

export function filterParams(namespaceId: number, filter: CandidateFilter) {
  return { ns: namespaceId, types: filter.types ? JSON.stringify(filter.types) : null, entity: filter.entityId };
}

/** Unfiltered BM25 ranks this many times the wanted depth, then drops other namespaces' rows. */
const BM25_OVERFETCH = 2;
/**
 * FTS5 scores every row a query matches before it can sort (no top-k pruning), ~1 µs each:
 * "where does Ava live" at 1M memories matches 30k rows through "live" alone. Past this many
 * matches the commonest terms are left out of the MATCH (low-IDF term elimination): the
 * rarer terms still bring at least `depth` rows, and a row matching only a common term
 * would have ranked below them anyway, as bm25 weighs a term by its rarity.
 */
const MATCH_BUDGET = 4000;

/** Lexical relevance: FTS5 with real bm25() ranking. */
export class Bm25Signal implements RetrievalSignal {
  readonly name = 'bm25';
  private readonly filtered;
  private readonly unfiltered;
  private readonly matchesUpTo;

  constructor(db: Db, private readonly namespaceId: number, readonly weight = 1) {
    this.matchesUpTo = db.prepare<[string, number], number>(
      'SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)').pluck();
    this.filtered = db.prepare<Record<string, unknown>, { rowid: number }>(`SELECT m.rowid AS rowid
      FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
      WHERE memories_fts MATCH @match AND ${FILTER_SQL}
      ORDER BY bm25(memories_fts) LIMIT @depth`);
    // Without an entity or type filter, FTS5 ranks on its own (ORDER BY rank inside the FTS
    // table) and only the best few rows are looked up in memories, instead of every match.
    this.unfiltered = db.prepare<Record<string, unknown>, { rowid: number; fetched: number }>(`
      WITH best AS MATERIALIZED (
        SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH @match ORDER BY rank LIMIT @fetch
      )
      SELECT m.rowid AS rowid, (SELECT count(*) FROM best) AS fetched FROM best JOIN memories m ON m.rowid = best.rowid
      WHERE m.namespace_id = @ns AND m.archived = 0
      ORDER BY best.rank LIMIT @depth`);
  }

  retrieve(ctx: RecallContext): Proposal[] {
    const match = ftsMatchExpression(this.selective(ctx.terms, ctx.depth));
    if (match === null) return [];
    const params = { match, depth: ctx.depth, ...filterParams(this.namespaceId, ctx.filter) };
    if (ctx.filter.entityId === null && ctx.filter.types === null) {
      const fetch = ctx.depth * BM25_OVERFETCH;
      const hits = this.unfiltered.all({ match, depth: ctx.depth, fetch, ns: this.namespaceId });
      // Enough survivors, or FTS5 had no more matches to give: either way the exact answer.
      if (hits.length === ctx.depth || (hits.length > 0 && hits[0].fetched < fetch)) return hits.map(({ rowid }) => ({ rowid }));
    }
    return this.filtered.all(params);
  }

  /** The terms, rarest first, without the commonest ones once MATCH_BUDGET would be passed. */
  private selective(terms: string[], depth: number): string[] {
    if (terms.length <= 1) return terms;
    // Counting stops at the budget, so this costs at most MATCH_BUDGET doclist steps per term.
    const counted = terms
      .map((term) => ({ term, matches: this.matchesUpTo.get(ftsMatchExpression([term])!, MATCH_BUDGET + 1)! }))
      .sort((a, b) => a.matches - b.matches);
    const kept: string[] = [];
    let matches = 0;
    for (const term of counted) {
      if (kept.length > 0 && matches >= depth && matches + term.matches > MATCH_BUDGET) break;
      kept.push(term.term);
      matches += term.matches;
    }
    return kept;
  }
}

/** Strength: FSRS retrievability now, times confidence — fresh, often-used, trusted memories first. */
export class StrengthSignal implements RerankSignal {
  readonly name = 'strength';
  constructor(readonly weight = 0.5) {}

  rank(ctx: RecallContext, candidates: MemoryRow[]): number[] {
    const strength = (m: MemoryRow) => retrievability(m.stability, ctx.now - m.last_access_at) * m.confidence;
    return [...candidates].sort((a, b) => strength(b) - strength(a) || b.created_at - a.created_at).map((m) => m.rowid);
  }
}
