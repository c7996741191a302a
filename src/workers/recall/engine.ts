// The recall pipeline: candidates from every retrieval signal (BM25, vector, graph) → rerank
// signals over the candidate union (strength) → weighted RRF → top `limit`. Filters
// (namespace, archived, entity, types) are applied inside each candidate query, before the limit.
import type { Db } from '../../shared/db.js';
import type { MemoryRecord, MemoryType } from '../../shared/schemas.js';
import type { EntityMatcher } from '../entity-mentions.js';
import { MEMORY_COLUMNS, type MemoryRow, type ReadStore } from '../read-store.js';
import { fuseRankings, type RankedList } from './fuse.js';
import { GraphSignal } from './graph-signal.js';
import { queryTerms } from './query-text.js';
import { Bm25Signal } from './bm25-signal.js';
import { StrengthSignal, type Proposal, type RecallContext, type RerankSignal, type RetrievalSignal } from './signals.js';
import { VectorSignal } from './vector-signal.js';
import { VectorCells } from '../vector-index/cells.js';
import type { StageTimings } from '../../shared/messages.js';
import { timed } from './timing.js';

export interface RecallRequest {
  query: string;
  entity: string | null;
  types: MemoryType[] | null;
  limit: number;
  /** The query's embedding, computed once by the caller; null to recall without vectors. */
  queryVector: Float32Array | null;
}

export interface RecallHit {
  row: MemoryRow;
  score: number;
}

/** Weights of weighted RRF, tuned with bench/recall-quality (see README). */
export const SIGNAL_WEIGHTS = { bm25: 1.5, vector: 1, graph: 0.7, strength: 0.1 } as const;
export type SignalName = keyof typeof SIGNAL_WEIGHTS;

export interface EngineOptions {
  /** Cosine similarity from which a vector match counts on its own (embedder calibration). */
  minSimilarity: number;
  /** Restrict to some signals (quality benchmarks measure each alone). */
  only?: readonly SignalName[];
  /** Override fusion weights (quality benchmarks tune them). */
  weights?: Partial<Record<SignalName, number>>;
  /** IVF cells scanned per query; 0 or absent = chosen from the cell count. */
  vectorProbes?: number;
}

/** Each retrieval signal proposes this many times `limit` candidates (at least MIN_DEPTH). */
const DEPTH_FACTOR = 4;
const MIN_DEPTH = 50;

export class RecallEngine {
  private readonly retrieval: RetrievalSignal[];
  private readonly rerank: RerankSignal[];
  private readonly hydrate;
  private readonly inSnapshot: <T>(work: () => T) => T;

  constructor(
    db: Db,
    private readonly store: ReadStore,
    private readonly entities: EntityMatcher,
    options: EngineOptions,
  ) {
    const { minSimilarity, only } = options;
    const weights = { ...SIGNAL_WEIGHTS, ...options.weights };
    const use = (name: SignalName) => !only || only.includes(name);
    const ns = store.namespaceId;
    this.retrieval = [
      ...(use('bm25') ? [new Bm25Signal(db, ns, weights.bm25)] : []),
      ...(use('vector') ? [new VectorSignal(db, ns, minSimilarity, new VectorCells(db, ns, options.vectorProbes), weights.vector)] : []),
      ...(use('graph') ? [new GraphSignal(db, ns, weights.graph)] : []),
    ];
    this.rerank = use('strength') ? [new StrengthSignal(weights.strength)] : [];
    this.inSnapshot = db.transaction(<T>(work: () => T): T => work()) as <T>(work: () => T) => T;
    this.hydrate = db.prepare<[string], MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?))`);
  }

  /**
   * One read transaction per recall: the IVF cells probed and the vectors scanned come from the
   * same snapshot, even if the indexer moves vectors between cells meanwhile.
   */
  recall(request: RecallRequest, now = Date.now(), timings: StageTimings = {}): RecallHit[] {
    return this.inSnapshot(() => this.recallNow(request, now, timings));
  }

  private recallNow(request: RecallRequest, now: number, timings: StageTimings): RecallHit[] {
    let entityId: string | null = null;
    if (request.entity !== null) {
      const entity = this.store.entity(request.entity);
      // An entity nothing was ever stored for has no memories: an empty answer, not an error.
      if (!entity) return [];
      entityId = entity.id;
    }
    if (request.types && request.types.length === 0) return [];
    const ctx: RecallContext = {
      query: request.query,
      terms: queryTerms(request.query),
      queryVector: request.queryVector,
      // The filter entity adds no information as a graph seed: every candidate is linked to it.
      queryEntityIds: this.entities.find(request.query).filter((id) => id !== entityId),
      filter: { entityId, types: request.types && request.types.length > 0 ? request.types : null },
      depth: Math.max(MIN_DEPTH, request.limit * DEPTH_FACTOR),
      now,
      timings,
    };

    const lists = corroborated(this.retrieval.map((signal) => ({
      weight: signal.weight, proposals: timed(timings, signal.name, () => signal.retrieve(ctx)),
    })));
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

/**
 * Drops weak proposals no other signal made, keeping each list's order (its ranking).
 * A faint vector match for "What does Ava do for a living?" counts when it is also one of
 * Ava's memories (graph); on its own it is noise.
 */
function corroborated(lists: { weight: number; proposals: Proposal[] }[]): RankedList[] {
  const proposers = new Map<number, number>();
  for (const list of lists) for (const p of new Set(list.proposals.map((x) => x.rowid))) proposers.set(p, (proposers.get(p) ?? 0) + 1);
  return lists.map((list) => ({
    weight: list.weight,
    rowids: list.proposals.filter((p) => !p.weak || proposers.get(p.rowid)! > 1).map((p) => p.rowid),
  }));
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
