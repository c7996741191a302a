// Vector candidates on PostgreSQL without pgvector: float32 bytea rows with their IVF cell
// (memory_vectors, covering index (namespace_id, cell) INCLUDE (rowid, embedding)), scored here.
// Reading a probed cell moves its vectors over the wire (~5 MB per query at 100k), so each pool
// thread keeps the cells it has read, and a recall first asks the server for each probed cell's
// fingerprint (count, highest rowid and sum of rowid hashes, from the index alone): only a cell that changed is read
// again. A vector changed in place without changing its cell's members (never done online) is
// not noticed until its cell changes.
import { LRUCache } from 'lru-cache';
import { float32FromBlob } from '../../shared/meta.js';
import type { Proposal, RecallContext } from '../port/candidates.js';
import { graded, WEAK_SIMILARITY } from '../port/similarity.js';
import { probedCells, group, type CellRow, type Generation } from '../ivf/cells.js';
import type { Tx } from './client.js';
import { candidateFilter, isSmallEntity } from './filter.js';

/** Close neighbours checked against the filter at most (as vec0's k cap on the SQLite path). */
const MAX_K = 4096;
/** Bytes of cached cells per pool thread (~64k 256-d vectors). */
const CACHE_BYTES = 64 * 1024 * 1024;

interface CachedCell {
  count: number;
  topRowid: number;
  /** Sum of hashint8(rowid): a plain sum of rowids matched again after a move in and a delete. */
  rowidSum: number;
  rowids: Float64Array;
  /** Unit-length vectors, row after row. */
  data: Float32Array;
  dimensions: number;
}

interface Fingerprint {
  cell: number;
  count: number;
  top: number;
  sum: number;
}

interface Scored {
  rowid: number;
  score: number;
}

export class PostgresVectors {
  /** Only an optimisation: a cell too big for it (lru-cache refuses those) or evicted meanwhile is still scored. */
  private readonly cache: LRUCache<number, CachedCell>;
  private generations: Generation[] = [];
  private generationsKey = '';

  constructor(private readonly namespaceId: number, private readonly minSimilarity: number, private readonly probes = 0, cacheBytes = CACHE_BYTES) {
    this.cache = new LRUCache<number, CachedCell>({ maxSize: cacheBytes, sizeCalculation: (c) => c.data.byteLength + c.rowids.byteLength + 64 });
  }

  async nearest(tx: Tx, ctx: RecallContext): Promise<Proposal[]> {
    const query = ctx.queryVector;
    if (!query) return [];
    // An entity's memories are usually few: score exactly those.
    if (ctx.filter.entityId !== null && (await isSmallEntity(tx, ctx.filter.entityId))) {
      const rows = await tx<{ rowid: number; embedding: Buffer }[]>`SELECT v.rowid, v.embedding FROM memory_entities e
        JOIN memories m ON m.rowid = e.memory_rowid JOIN memory_vectors v ON v.rowid = m.rowid
        WHERE e.entity_id = ${ctx.filter.entityId} AND e.relation IN ('owner', 'participant') AND ${candidateFilter(tx, this.namespaceId, ctx.filter)}`;
      return graded(closest(rows.map((r) => ({ rowid: r.rowid, score: cosine(query, float32FromBlob(r.embedding)) })), ctx.depth), this.minSimilarity);
    }
    const cells = probedCells(await this.cellIndex(tx), query, this.probes);
    const close = closest(await this.scan(tx, cells, query), MAX_K);
    if (close.length === 0) return [];
    // Archived, types and entity live in memories: keep the nearest that pass, in order.
    const kept = new Set((await tx<{ rowid: number }[]>`SELECT m.rowid FROM memories m
      WHERE m.rowid = ANY(${close.map((c) => c.rowid)}::bigint[]) AND ${candidateFilter(tx, this.namespaceId, ctx.filter)}`).map((r) => r.rowid));
    return graded(close.filter((c) => kept.has(c.rowid)).slice(0, ctx.depth), this.minSimilarity);
  }

  /** Cosine similarity of the query to each of these memories that has a vector. */
  /** The stored vectors of these memories (those without one yet are absent). */
  async stored(tx: Tx, rowids: number[]): Promise<Map<number, Float32Array>> {
    if (rowids.length === 0) return new Map();
    const rows = await tx<{ rowid: number; embedding: Buffer }[]>`SELECT rowid, embedding FROM memory_vectors WHERE namespace_id = ${this.namespaceId} AND rowid = ANY(${rowids}::bigint[])`;
    return new Map(rows.map((r) => [Number(r.rowid), float32FromBlob(r.embedding)]));
  }

  async similarities(tx: Tx, query: Float32Array, rowids: number[]): Promise<Map<number, number>> {
    if (rowids.length === 0) return new Map();
    const rows = await tx<{ rowid: number; embedding: Buffer }[]>`SELECT rowid, embedding FROM memory_vectors WHERE rowid = ANY(${rowids}::bigint[])`;
    return new Map(rows.map((r) => [r.rowid, cosine(query, float32FromBlob(r.embedding))]));
  }

  /** The namespace's IVF generations, re-read only when the writer installs or retires one. */
  async cellIndex(tx: Tx): Promise<Generation[]> {
    const [{ top, cells }] = await tx<{ top: number | null; cells: number }[]>`SELECT max(c.cell) AS top, count(*) AS cells
      FROM vector_cells c JOIN vector_generations g ON g.generation = c.generation WHERE g.namespace_id = ${this.namespaceId}`;
    const key = `${top}:${cells}`;
    if (key !== this.generationsKey) {
      this.generations = group(await tx<CellRow[]>`SELECT c.cell, c.generation, g.trained_on, c.centroid FROM vector_cells c
        JOIN vector_generations g ON g.generation = c.generation WHERE g.namespace_id = ${this.namespaceId} ORDER BY c.cell`);
      this.generationsKey = key;
    }
    return this.generations;
  }

  /** Every vector of these cells scored against the query (similarity ≥ the weak floor). */
  private async scan(tx: Tx, cells: number[], query: Float32Array): Promise<Scored[]> {
    const prints = await tx<Fingerprint[]>`SELECT cell, count(*) AS count, max(rowid) AS top, sum(hashint8(rowid))::bigint AS sum
      FROM memory_vectors WHERE namespace_id = ${this.namespaceId} AND cell = ANY(${cells}::bigint[]) GROUP BY cell`;
    // The cells this recall scores, held here for its whole scan: the cache may drop any of them meanwhile.
    const current = new Map<number, CachedCell>();
    const stale = prints.filter((p) => {
      const cached = this.cache.get(p.cell);
      const fresh = cached !== undefined && cached.count === p.count && cached.topRowid === p.top && cached.rowidSum === p.sum;
      if (fresh) current.set(p.cell, cached);
      return !fresh;
    });
    if (stale.length > 0) for (const [cell, loaded] of await this.load(tx, stale)) current.set(cell, loaded);
    const unit = normalised(query);
    const scored: Scored[] = [];
    for (const cached of current.values()) {
      if (cached.dimensions !== unit.length) continue;
      const { data, rowids, dimensions } = cached;
      for (let row = 0; row < rowids.length; row++) {
        let dot = 0;
        const offset = row * dimensions;
        for (let i = 0; i < dimensions; i++) dot += data[offset + i] * unit[i];
        if (dot >= WEAK_SIMILARITY) scored.push({ rowid: rowids[row], score: dot });
      }
    }
    return scored;
  }

  /** These cells read whole, each also offered to the cache. */
  private async load(tx: Tx, prints: Fingerprint[]): Promise<Map<number, CachedCell>> {
    const rows = await tx<{ cell: number; rowid: number; embedding: Buffer }[]>`SELECT cell, rowid, embedding FROM memory_vectors
      WHERE namespace_id = ${this.namespaceId} AND cell = ANY(${prints.map((p) => p.cell)}::bigint[]) ORDER BY cell, rowid`;
    const byCell = new Map<number, { rowid: number; vector: Float32Array }[]>();
    for (const row of rows) {
      const list = byCell.get(row.cell) ?? [];
      list.push({ rowid: row.rowid, vector: normalised(float32FromBlob(row.embedding)) });
      byCell.set(row.cell, list);
    }
    const loaded = new Map<number, CachedCell>();
    for (const print of prints) {
      const members = byCell.get(print.cell) ?? [];
      const dimensions = members[0]?.vector.length ?? 0;
      const data = new Float32Array(members.length * dimensions);
      members.forEach((m, i) => data.set(m.vector.length === dimensions ? m.vector : new Float32Array(dimensions), i * dimensions));
      const cell: CachedCell = { count: print.count, topRowid: print.top, rowidSum: print.sum, dimensions, data, rowids: Float64Array.from(members, (m) => m.rowid) };
      loaded.set(print.cell, cell);
      this.cache.set(print.cell, cell);
    }
    return loaded;
  }
}

/** The best `n` (similarity ≥ the weak floor), nearest first, ties by rowid. */
function closest(scored: Scored[], n: number): Scored[] {
  return scored.filter((s) => s.score >= WEAK_SIMILARITY).sort((a, b) => b.score - a.score || a.rowid - b.rowid).slice(0, n);
}

function normalised(vector: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i] * vector[i];
  norm = Math.sqrt(norm);
  return norm > 0 ? vector.map((v) => v / norm) : vector;
}

function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}
