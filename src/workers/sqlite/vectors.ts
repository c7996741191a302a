// Semantic relevance: cosine KNN over sqlite-vec, in the IVF cells nearest the query (every
// cell while the namespace is too small to be indexed; see workers/ivf/). Filters (archived,
// types, entity) live in the memories table, so KNN over-fetches and filters; when a filter
// is selective (an entity, or too few survivors) an exact scan over only the filtered rows
// is used instead.
//
// Sentence embedders give unrelated short texts similarities up to ~0.45 (USE-lite) while
// real question→answer paraphrases often score 0.2–0.45, so no single cut separates them.
// Neighbours at or above the embedder's calibrated floor (and near the best match) are
// proposed outright; fainter ones down to WEAK_SIMILARITY are proposed as *weak*: they only
// count when BM25 proposes the same memory or it links an entity the query names.
import type { Db } from '../../shared/db.js';
import { prepareOnce } from '../../shared/connection-statements.js';
import { statementPerLimits } from '../../shared/literal-statements.js';
import { blobOf, float32FromBlob } from '../../shared/meta.js';
import type { VectorCells } from './ivf-cells.js';
import type { NamespaceVectorCodes } from './vector-codes.js';
import type { CodesReader } from '../ivf/vector-codes.js';
import type { StageTimings } from '../../shared/protocol/pool.js';
import { retiredCell } from '../../shared/sql-schema.js';
import { timed } from '../port/timing.js';
import { LARGE_ENTITY, type Proposal, type RecallContext } from '../port/candidates.js';
import { graded, WEAK_SIMILARITY } from '../port/similarity.js';
import { entitySize, FILTER_SQL, filterParams, type RetrievalSignal } from './filter.js';

/**
 * With a types filter, KNN fetches this many times the wanted depth, to survive filtering.
 * Without one only archived rows drop out, so it fetches the depth itself: vec0's per-chunk
 * top-k selection costs in proportion to k (k = 150 took ~2× k = 50 at 100k vectors).
 */
const TYPED_OVERFETCH = 3;
/** When filtering left too few of k close neighbours, KNN looks again this many times wider. */
const WIDER = 4;
/** vec0 caps k; beyond it the exact filtered scan is used. */
const MAX_K = 4096;
/**
 * The in-memory codes shortlist k and a fifth more (at least SHORTLIST_MIN) for the exact
 * re-rank: int8 scores reorder near neighbours a little, so the true k are found among a few
 * more. Each re-ranked vector costs ~10 µs (a vec0 lookup by rowid), so the margin is kept small:
 * at 1M hash-256 vectors (k = 50) a shortlist of 60 held the same share of the exact top 50 as
 * one of 100 at every share of cells probed from 20% to 40% (50 lost a point; bench/codes-variants.ts,
 * docs/vector-codes.md), and at 200k a shortlist of 60 held every one the probed cells hold.
 */
const SHORTLIST_MARGIN = 1.2;
const SHORTLIST_MIN = 60;
/**
 * Codes of memories deleted or re-embedded since the store was built stay in it until its next
 * full build; the re-rank reads the file, so they come back as nothing (or far away). When they
 * crowd near a query they can take most of the shortlist's places: a re-rank that returned fewer
 * than k close rows while the scan's last code kept still looked close (so the probed cells hold
 * more close codes) lost rows to them, and looks again over a shortlist sized from the live share
 * the last one had (at least twice as wide), up to this many codes and LOOKS_WITH_CODES looks;
 * past either vec0, which holds no dead vector, answers. Sizing from the live share keeps a
 * cluster of dead codes from costing a scan per doubling (8 scans and ~12k re-ranked rows before).
 */
const SHORTLIST_WIDEST = MAX_K;
const LOOKS_WITH_CODES = 3;
/**
 * How far above the closeness floor (WEAK_SIMILARITY) the last code kept must look before a
 * short re-rank is put down to dead codes. An int8 code's cosine with a query differs from its
 * vector's by a few thousandths (docs/vector-codes.md): with this margin a shortlist without dead
 * codes never widens (every row it holds comes back close), and a query with few close neighbours,
 * whose shortlist runs past them, does not widen either.
 */
const CODE_COSINE_MARGIN = 0.05;

export class VectorSignal implements RetrievalSignal {
  readonly name = 'vector';
  private readonly knn;
  private readonly exact;
  private readonly exactOfEntity;
  private readonly entitySize;
  private readonly ofRows;
  private readonly rerank;
  private readonly stored;
  /** Per unfiltered (0) / filtered (1) look: the KNN size the last one needed (see closestKept). */
  private readonly startWidth = [0, 0];

  constructor(
    db: Db,
    private readonly namespaceId: number,
    /** Cosine similarity below which a neighbour is unrelated (the embedder's calibration). */
    private readonly minSimilarity: number,
    /** The IVF cells: which of them a query scans (all vectors are in cell 0 until indexed). */
    private readonly cells: VectorCells,
    /** The namespace's shared codes, scanned instead of vec0 when the recall was lent a store (null: off). */
    private readonly codes: NamespaceVectorCodes | null = null,
  ) {
    // vec0 runs the KNN once per probed cell (k each); the best k of the union go on.
    // MATERIALIZED keeps SQLite from pushing the outer LIMIT into vec0, which refuses it.
    // Row counts are spelled into the SQL (shared/literal-statements.ts): bound, they made
    // SQLite prepare the statement again on every run.
    this.knn = statementPerLimits<Record<string, unknown>, Neighbour>(db, (k) => `
      WITH per_cell AS MATERIALIZED (
        SELECT rowid, distance FROM memory_vectors
        WHERE embedding MATCH @vector AND k = ${k} AND namespace_id = @nsKey
          AND cell IN (SELECT value FROM json_each(@cells))
      ),
      knn AS (SELECT rowid, distance FROM per_cell ORDER BY distance, rowid LIMIT ${k})
      -- Every close neighbour, flagged: the caller needs to know how many the filter dropped.
      SELECT knn.rowid AS rowid, knn.distance AS distance, (m.rowid IS NOT NULL AND ${FILTER_SQL}) AS kept
      FROM knn LEFT JOIN memories m ON m.rowid = knn.rowid
      WHERE knn.distance <= @maxDistance
      ORDER BY knn.distance, knn.rowid`);
    // vec0 has a hidden column named "distance": compute under another name first.
    const exactOver = (rows: string) => (depth: string) => `
      SELECT rowid, cosine_distance AS distance FROM (
        SELECT m.rowid AS rowid, vec_distance_cosine(v.embedding, @vector) AS cosine_distance
        FROM ${rows} CROSS JOIN memory_vectors v ON v.rowid = m.rowid
        WHERE ${FILTER_SQL}
      )
      WHERE cosine_distance <= @maxDistance
      ORDER BY cosine_distance LIMIT ${depth}`;
    this.exact = statementPerLimits<Record<string, unknown>, Neighbour>(db, exactOver('memories m'));
    this.entitySize = entitySize(db);
    // From the entity's links, never a walk over the namespace checking each row for a link.
    this.exactOfEntity = statementPerLimits<Record<string, unknown>, Neighbour>(db, exactOver(`memory_entities e
      CROSS JOIN memories m ON m.rowid = e.memory_rowid AND e.entity_id = @entity AND e.relation IN ('owner', 'participant')`));
    // The shortlist's exact cosines from the stored float vectors, the closest k kept, flagged
    // like KNN rows. Only rows of this namespace: the codes may still hold a deleted memory.
    // DISTINCT: a re-embedded memory has two codes (the old one stays until the next full build),
    // a fresh row may be in the store too, and one memory must not take two of the k places.
    this.rerank = statementPerLimits<Record<string, unknown>, Neighbour>(db, (k) => `
      SELECT c.rowid AS rowid, c.cosine_distance AS distance, (${FILTER_SQL}) AS kept FROM (
        SELECT v.rowid AS rowid, vec_distance_cosine(v.embedding, @vector) AS cosine_distance
        FROM (SELECT DISTINCT value FROM json_each(@rowids)) j CROSS JOIN memory_vectors v ON v.rowid = j.value
      ) c CROSS JOIN memories m ON m.rowid = c.rowid AND m.namespace_id = @ns
      WHERE c.cosine_distance <= @maxDistance
      ORDER BY c.cosine_distance LIMIT ${k}`);
    this.ofRows = prepareOnce<[Buffer, string], { rowid: number; similarity: number }>(db, `
      SELECT rowid, 1 - cosine_distance AS similarity FROM (
        SELECT v.rowid AS rowid, vec_distance_cosine(v.embedding, ?) AS cosine_distance
        FROM json_each(?) j CROSS JOIN memory_vectors v ON v.rowid = j.value)`);
    // Only this namespace's memories: a port never reads another namespace's row by rowid.
    this.stored = prepareOnce<[string, number], { rowid: number; embedding: Buffer }>(db, `
      SELECT v.rowid AS rowid, v.embedding AS embedding FROM json_each(?) j
      CROSS JOIN memories m ON m.rowid = j.value AND m.namespace_id = ?
      CROSS JOIN memory_vectors v ON v.rowid = m.rowid`);
  }

  /** The stored vectors of these memories of this namespace (those without one yet are absent). */
  vectors(rowids: number[]): Map<number, Float32Array> {
    if (rowids.length === 0) return new Map();
    return new Map(this.stored.all(ascending(rowids), this.namespaceId).map((r) => [r.rowid, float32FromBlob(r.embedding)]));
  }

  /**
   * Cosine similarity of the query to each of these memories that has a vector (point lookups,
   * so every candidate is scored on this signal, not only the ones KNN proposed). Memories
   * without a vector yet are absent: fusion then ranks them on the lexical signal alone.
   */
  similarities(queryVector: Float32Array, rowids: number[]): Map<number, number> {
    if (rowids.length === 0) return new Map();
    return new Map(this.ofRows.all(blobOf(queryVector), ascending(rowids)).map((r) => [r.rowid, r.similarity]));
  }

  retrieve(ctx: RecallContext): Proposal[] {
    if (!ctx.queryVector) return [];
    // The store this recall was lent (when one was and it is valid), else vec0's cells.
    const codes = this.codes?.current(ctx.codes) ?? null;
    const params = {
      ...filterParams(this.namespaceId, ctx.filter),
      vector: blobOf(ctx.queryVector),
      maxDistance: 1 - WEAK_SIMILARITY,
    };
    // An entity's memories are usually few: scanning them exactly beats a namespace-wide KNN.
    if (ctx.filter.entityId !== null && this.entitySize(ctx.filter.entityId) <= LARGE_ENTITY) {
      return this.grade(this.exactOfEntity(ctx.depth).all(params));
    }
    const filtered = ctx.filter.types !== null || ctx.filter.entityId !== null;
    const k = Math.min(MAX_K, ctx.depth * (filtered ? TYPED_OVERFETCH : 1));
    const queryVector = ctx.queryVector;
    const timings = ctx.timings ?? {};
    const cells = timed(timings, 'vector_probe', () => (codes ? this.cells.probeForCodes(queryVector) : this.cells.probe(queryVector)));
    const knn = (k: number) => {
      const close = (codes ? this.closestByCodes(codes, queryVector, cells, k, params, timings) : null)
        // Without codes, or when the codes cannot answer (see closestByCodes): vec0.
        ?? this.knn(k).all({ ...params, nsKey: BigInt(this.namespaceId), cells: JSON.stringify(vecCells(codes ? this.cells.probe(queryVector) : cells, ctx)) });
      return { close, hits: close.filter((n) => n.kept).slice(0, ctx.depth) };
    };
    // With codes, a wider look also shortlists more rows for the exact re-rank, so it may find
    // other rows than a narrow one: each look there starts narrow, as if it were the first.
    const hits = this.closestKept(knn, k, ctx.depth, filtered, codes === null);
    // Too few of the right type among the neighbours: a small namespace is scanned exactly;
    // an indexed one (IVF cells exist, so ≥ SERVICE_VECTOR_INDEX_MIN vectors) keeps what the
    // probe found, since an exact scan there costs ~0.3 µs per vector.
    if (hits.length < ctx.depth && ctx.filter.types !== null && cells.length === 1) return this.grade(this.exact(ctx.depth).all(params));
    return this.grade(hits);
  }

  /**
   * The k closest rows of the probed cells by the codes: a shortlist of max(SHORTLIST_MIN, 1.2k)
   * codes re-ranked exactly, looked at again wider (from the live share it had) while dead codes took the places of
   * close rows (SHORTLIST_WIDEST). Null when vec0 must answer: more rows attached since the store
   * than it reads beside it, no scratch slot free, or dead codes past the widest shortlist.
   */
  private closestByCodes(reader: CodesReader, query: Float32Array, cells: number[], k: number, params: Record<string, unknown>, timings: StageTimings): Neighbour[] | null {
    // The stage is recorded only when the codes answered: a fallback to vec0 is vec0's time.
    let scanning = 0;
    let n = Math.max(SHORTLIST_MIN, Math.ceil(k * SHORTLIST_MARGIN));
    for (let look = 1; ; look++) {
      const started = performance.now();
      const shortlist = this.codes!.shortlist(reader, this.namespaceId, query, cells, n);
      scanning += performance.now() - started;
      if (!shortlist) return null;
      const close = timed(timings, 'vector_rerank', () => this.rerank(k).all({ ...params, rowids: JSON.stringify(shortlist.rowids) }));
      const lost = close.length < k && shortlist.lastSimilarity() >= WEAK_SIMILARITY + CODE_COSINE_MARGIN;
      if (!lost) {
        timings.vector_codes = (timings.vector_codes ?? 0) + scanning;
        return close;
      }
      if (n >= SHORTLIST_WIDEST || look === LOOKS_WITH_CODES) return null;
      // `close.length` of the n codes were live and close: as many again as k needs, with the margin.
      n = Math.min(SHORTLIST_WIDEST, Math.max(2 * n, Math.ceil((n * k * SHORTLIST_MARGIN) / Math.max(1, close.length))));
    }
  }

  /**
   * The first `depth` neighbours the filter keeps, from a KNN of k, or of up to k × WIDER when
   * filtering (archived, superseded, types, entity) left fewer of the close ones: more close
   * ones of the right kind may lie further out. Each look starts as wide as the last one of its
   * kind needed (with a margin, in steps of k): one KNN instead of two where many neighbours are
   * filtered out, and the same rows, since the first `depth` kept rows in distance order are the
   * same in any look that holds them. vec0's cost grows with k (5,000 vectors, 512-d: k = 50
   * ~3.4 ms, k = 200 ~4.8 ms), so the start is no wider than needed.
   */
  private closestKept(knn: (k: number) => { close: Neighbour[]; hits: Neighbour[] }, k: number, depth: number, filtered: boolean, remembers: boolean): Neighbour[] {
    const widest = Math.min(MAX_K, k * WIDER);
    const start = remembers ? Math.max(k, Math.min(widest, this.startWidth[+filtered])) : k;
    let look = knn(start);
    let size = start;
    if (look.hits.length < depth && look.close.length === start && start < widest) {
      look = knn(widest);
      size = widest;
    }
    if (remembers) this.startWidth[+filtered] = widthNeeded(look.close, size, depth, k, widest);
    return look.hits;
  }

  private grade(neighbours: Neighbour[]): Proposal[] {
    return graded(neighbours.map((n) => ({ rowid: n.rowid, score: 1 - n.distance })), this.minSimilarity);
  }
}

/**
 * Rowids for a vec0 point lookup per row, as a JSON array in ascending order: vec0 finds each
 * vector's chunk through its rowid table and opens the chunk blob, and neighbouring rowids share
 * both pages and chunk (a recall's ~70 candidate cosines took ~7.2 µs a row in rank order, ~5.5
 * sorted, 5,000 USE-lite vectors). Callers read the answer by rowid, so its order is free.
 */
function ascending(rowids: readonly number[]): string {
  return JSON.stringify([...rowids].sort((a, b) => a - b));
}

/**
 * The vec0 cells a KNN probes: the IVF cells, and their retired twins (superseded facts' vectors,
 * docs/superseded-vectors.md) only when the recall may keep a fact that is not valid now.
 */
function vecCells(cells: number[], ctx: RecallContext): number[] {
  return needsRetired(ctx) ? [...cells, ...cells.map(retiredCell)] : cells;
}

/**
 * Whether the time filter can keep a superseded fact: include_superseded, as_of (valid then), or
 * a time the query speaks of. A retired vector's fact stopped being valid before it was retired,
 * so a recall of what is valid now never needs one.
 */
function needsRetired(ctx: RecallContext): boolean {
  const time = ctx.filter.time;
  return time !== undefined && (time.allVersions || time.asOf || Boolean(time.during));
}

interface Neighbour {
  rowid: number;
  distance: number;
  /** KNN rows only: whether the memory passes the filter (1) or not (0). */
  kept?: number;
}

/** Room left over the rows the last look needed, for the next look of its kind. */
const WIDTH_MARGIN = 1.5;

/**
 * The KNN size the next look should start with: enough rows, in steps of k, to hold `depth`
 * kept rows with a margin, judged by where this look found its depth-th kept row (`size`
 * rows fetched, `close` of them close). Fewer kept than wanted among all it fetched: the widest.
 */
function widthNeeded(close: Neighbour[], size: number, depth: number, k: number, widest: number): number {
  let kept = 0;
  for (let i = 0; i < close.length; i++) {
    if (close[i]!.kept && ++kept === depth) return i + 1 <= k ? k : Math.min(widest, Math.ceil((i + 1) * WIDTH_MARGIN / k) * k);
  }
  // Every close row seen (the look ran out of close ones): any start no narrower than that holds them.
  return close.length < size ? Math.max(k, Math.ceil((close.length + 1) / k) * k) : widest;
}
