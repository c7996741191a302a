// The recall pipeline: candidates from every retrieval signal → rerank signals over the
// candidate union → weighted RRF → top `limit`. Filters (namespace, archived, entity,
// types) are applied inside each candidate query, before the limit.
import type { Db } from '../../shared/db.js';
import type { MemoryRecord, MemoryType } from '../../shared/schemas.js';
import { MEMORY_COLUMNS, type MemoryRow, type ReadStore } from '../read-store.js';
import { fuseRankings, type RankedList } from './fuse.js';
import { queryTerms } from './query-text.js';
import { Bm25Signal, StrengthSignal, type RecallContext, type RerankSignal, type RetrievalSignal } from './signals.js';
import type { StageTimings } from '../../shared/messages.js';
import { timed } from './timing.js';

export interface RecallRequest {
  query: string;
  entity: string | null;
  types: MemoryType[] | null;
  limit: number;
}

export interface RecallHit {
  row: MemoryRow;
  score: number;
}

/** Each retrieval signal proposes this many times `limit` candidates (at least MIN_DEPTH). */
const DEPTH_FACTOR = 4;
const MIN_DEPTH = 50;

export class RecallEngine {
  private readonly retrieval: RetrievalSignal[];
  private readonly rerank: RerankSignal[];
  private readonly hydrate;

  constructor(db: Db, private readonly store: ReadStore) {
    this.retrieval = [new Bm25Signal(db, store.namespaceId)];
    this.rerank = [new StrengthSignal()];
    this.hydrate = db.prepare<[string], MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?))`);
  }

  recall(request: RecallRequest, now = Date.now(), timings: StageTimings = {}): RecallHit[] {
    let entityId: string | null = null;
    if (request.entity !== null) {
      const entity = this.store.entity(request.entity);
      // An entity nothing was ever stored for has no memories: an empty answer, not an error.
      if (!entity) return [];
      entityId = entity.id;
    }
    const ctx: RecallContext = {
      query: request.query,
      terms: queryTerms(request.query),
      filter: { entityId, types: request.types && request.types.length > 0 ? request.types : null },
      depth: Math.max(MIN_DEPTH, request.limit * DEPTH_FACTOR),
      now,
      timings,
    };
    if (request.types && request.types.length === 0) return [];

    const lists: RankedList[] = this.retrieval.map((signal) => ({
      weight: signal.weight, rowids: timed(timings, signal.name, () => signal.retrieve(ctx)),
    }));
    const candidateIds = [...new Set(lists.flatMap((list) => list.rowids))];
    if (candidateIds.length === 0) return [];
    const rows = new Map(timed(timings, 'hydrate', () => this.hydrate.all(JSON.stringify(candidateIds))).map((row) => [row.rowid, row]));
    const candidates = [...rows.values()];
    for (const signal of this.rerank) lists.push({ weight: signal.weight, rowids: timed(timings, signal.name, () => signal.rank(ctx, candidates)) });

    return timed(timings, 'fusion', () => fuseRankings(lists))
      .slice(0, request.limit)
      .flatMap(({ rowid, score }) => {
        const row = rows.get(rowid);
        return row ? [{ row, score }] : [];
      });
  }
}

/** The public Memory shape. `score` is null where no ranking happened (inspect). */
export function toMemory(row: MemoryRow, score: number | null): MemoryRecord {
  return {
    id: row.id,
    content: row.content,
    memory_type: row.memory_type,
    confidence: row.confidence,
    stability: row.stability,
    score: score === null ? null : Math.round(score * 1e6) / 1e6,
  };
}
