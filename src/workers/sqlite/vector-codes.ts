// One namespace's in-memory vector codes (ivf/vector-codes.ts) in this pool thread, loaded
// from the SQLite file once the namespace has an IVF index and kept current with it:
//   - a generation installed or retired (VectorCells.key changes): loaded again, in the new cells;
//   - vectors embedded since (new memories, re-embedded ones): appended, found by rowid above
//     a watermark below which every embedded vector is held (AUTOINCREMENT rowids only grow);
//   - deleted memories: left in the codes; the exact re-rank reads the file and drops them.
// A load reads vec0's chunks directly (see vectorChunks): its own scan looks each vector up on
// its own, ~10 µs a vector (10 s per 1M), where the chunks take ~2 µs.
// Nothing is read while the file is unchanged (PRAGMA data_version). Only this namespace's
// rows are read, and every shortlisted rowid is checked against the namespace again on re-rank.
import type { Db } from '../../shared/db.js';
import { onConnection } from '../../shared/connection-statements.js';
import { float32FromBlob } from '../../shared/meta.js';
import type { BudgetedCodes, CodeBudget } from '../ivf/code-budget.js';
import { codeBytesFor, headroom, VectorCodes, type CodedVector } from '../ivf/vector-codes.js';
import type { VectorCells } from './ivf-cells.js';

interface VectorRow {
  rowid: number;
  cell: number;
  embedding: Buffer | null;
}

export class NamespaceVectorCodes implements BudgetedCodes {
  private codes: VectorCodes | null = null;
  /** VectorCells.key the codes were loaded under. */
  private loadedFor = '';
  private seenVersion = -1;
  /** Every vector of the namespace embedded with a rowid ≤ low is held. */
  private low = 0;
  /** Rowids above `low` already held. */
  private readonly above = new Set<number>();
  /** Rowids ≤ low seen waiting for a new vector (content changed): read again once embedded. */
  private readonly reembedding = new Set<number>();
  private readonly s;

  constructor(db: Db, private readonly namespaceId: number, private readonly cells: VectorCells, private readonly budget: CodeBudget) {
    this.s = onConnection(db, NamespaceVectorCodes, () => ({
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
      embedded: db.prepare<[number], number>('SELECT count(*) FROM memories WHERE namespace_id = ? AND embedded = 1').pluck(),
      // Without vec0's chunk tables (another sqlite-vec layout): vec0 by rowid, in cell order.
      all: db.prepare<[number], VectorRow>(`
        SELECT m.rowid AS rowid, m.vector_cell AS cell, v.embedding AS embedding
        FROM memories m CROSS JOIN memory_vectors v ON v.rowid = m.rowid
        WHERE m.namespace_id = ? AND m.embedded = 1 ORDER BY m.vector_cell`),
      // A rowid range (+ keeps the namespace's indexes out of it: they would read every row).
      newestRowid: db.prepare<[], number | null>('SELECT max(rowid) FROM memories').pluck(),
      after: db.prepare<[number, number], VectorRow>(`
        SELECT m.rowid AS rowid, m.vector_cell AS cell, v.embedding AS embedding
        FROM memories m CROSS JOIN memory_vectors v ON v.rowid = m.rowid
        WHERE m.rowid > ? AND +m.namespace_id = ? AND m.embedded = 1`),
      one: db.prepare<[number, number], VectorRow & { embedded: number }>(`
        SELECT m.rowid AS rowid, m.vector_cell AS cell, m.embedded AS embedded, v.embedding AS embedding
        FROM memories m LEFT JOIN memory_vectors v ON v.rowid = m.rowid WHERE m.rowid = ? AND m.namespace_id = ?`),
      firstUnembeddedAfter: db.prepare<[number, number], number | null>(
        'SELECT min(rowid) FROM memories WHERE namespace_id = ? AND embedded = 0 AND rowid > ?').pluck(),
      unembeddedUpTo: db.prepare<[number, number], number>(
        'SELECT rowid FROM memories WHERE namespace_id = ? AND embedded = 0 AND rowid <= ?').pluck(),
    }));
    this.chunks = vectorChunks(db);
  }

  private readonly chunks;

  get bytes(): number {
    return this.codes?.bytes ?? 0;
  }

  release(): void {
    this.codes = null;
    this.loadedFor = '';
  }

  /**
   * The namespace's codes, current with the file; null when recall should use vec0 instead
   * (no IVF index yet, the codes would not fit the thread's budget, or no WebAssembly SIMD).
   */
  current(): VectorCodes | null {
    if (this.budget.limitBytes === 0) return null;
    const generations = this.cells.current();
    if (generations.length === 0) {
      this.budget.forget(this);
      this.release();
      return null;
    }
    if (this.codes && this.loadedFor === this.cells.key) {
      this.refresh(this.codes);
      this.budget.touch(this);
      return this.codes;
    }
    return this.load(generations[0].centroids.dimensions);
  }

  private load(dimensions: number): VectorCodes | null {
    this.release();
    const count = this.s.embedded.get(this.namespaceId)!;
    const capacity = count + headroom(count);
    if (!this.budget.admit(this, codeBytesFor(capacity, dimensions))) return null;
    const codes = VectorCodes.create(dimensions, capacity);
    if (!codes) {
      this.budget.forget(this);
      return null;
    }
    this.above.clear();
    this.reembedding.clear();
    this.seenVersion = this.s.dataVersion.get()!;
    // Rows from the first one still waiting for its vector up are the watermark's to watch.
    const firstUnembedded = this.s.firstUnembeddedAfter.get(this.namespaceId, 0) ?? null;
    let highest = 0;
    const rows = this.chunks ? this.chunks(this.namespaceId, dimensions) : this.rows();
    for (const row of rows) {
      codes.add(row);
      highest = Math.max(highest, row.rowid);
      if (firstUnembedded !== null && row.rowid > firstUnembedded) this.above.add(row.rowid);
    }
    this.low = firstUnembedded === null ? highest : Math.min(highest, firstUnembedded - 1);
    this.codes = codes;
    this.loadedFor = this.cells.key;
    return codes;
  }

  private *rows(): Generator<CodedVector> {
    for (const row of this.s.all.iterate(this.namespaceId)) {
      if (row.embedding) yield { rowid: row.rowid, cell: row.cell, vector: float32FromBlob(row.embedding) };
    }
  }

  private refresh(codes: VectorCodes): void {
    const version = this.s.dataVersion.get()!;
    if (version === this.seenVersion) return;
    this.seenVersion = version;
    let highest = this.low;
    for (const rowid of this.above) highest = Math.max(highest, rowid);
    for (const row of this.s.after.iterate(this.low, this.namespaceId)) {
      highest = Math.max(highest, row.rowid);
      if (this.above.has(row.rowid) || !row.embedding) continue;
      codes.add({ rowid: row.rowid, cell: row.cell, vector: float32FromBlob(row.embedding) });
      this.above.add(row.rowid);
    }
    // An older memory whose content changed waits for a new vector: its old code stays (the
    // re-rank scores the new one exactly), and the new one is added once it is there.
    for (const rowid of this.s.unembeddedUpTo.iterate(this.namespaceId, this.low)) this.reembedding.add(rowid);
    for (const rowid of this.reembedding) {
      const row = this.s.one.get(rowid, this.namespaceId);
      if (row?.embedded === 1 && row.embedding) codes.add({ rowid, cell: row.cell, vector: float32FromBlob(row.embedding) });
      if (!row || row.embedded === 1) this.reembedding.delete(rowid);
    }
    // Up to the newest row of the whole file, not only of this namespace: rows of other
    // namespaces past our newest would otherwise be scanned again after every write anywhere.
    highest = Math.max(highest, this.s.newestRowid.get() ?? 0);
    const waiting = this.s.firstUnembeddedAfter.get(this.namespaceId, this.low) ?? null;
    const low = waiting === null ? highest : Math.min(highest, waiting - 1);
    if (low > this.low) {
      this.low = low;
      for (const rowid of this.above) if (rowid <= low) this.above.delete(rowid);
    }
    if (codes.unordered > Math.max(4096, codes.size / 8)) codes.order();
    if (!this.budget.admit(this, codes.bytes)) this.release();
  }
}

/**
 * Every vector of a namespace straight from vec0's shadow tables (sqlite-vec 0.1.x layout, in
 * the pinned version): memory_vectors_chunks holds, per chunk of one partition (namespace_id,
 * cell), a validity bitmap and the slots' rowids (int64); memory_vectors_vector_chunks00 the
 * slots' float32 vectors. Null when the file does not have that layout.
 */
function vectorChunks(db: Db): ((namespaceId: number, dimensions: number) => Iterable<CodedVector>) | null {
  const columns = (table: string) => new Set(db.prepare<[string], string>('SELECT name FROM pragma_table_info(?)').pluck().all(table));
  const chunkColumns = columns('memory_vectors_chunks');
  const vectorColumns = columns('memory_vectors_vector_chunks00');
  const layout = ['chunk_id', 'partition00', 'partition01', 'validity', 'rowids'].every((c) => chunkColumns.has(c)) && vectorColumns.has('vectors');
  if (!layout) return null;
  const chunks = db.prepare<[number], { chunk: number; cell: number; validity: Buffer; rowids: Buffer }>(`
    SELECT chunk_id AS chunk, partition01 AS cell, validity, rowids FROM memory_vectors_chunks
    WHERE partition00 = ? ORDER BY partition01, chunk_id`);
  const vectors = db.prepare<[number], Buffer>('SELECT vectors FROM memory_vectors_vector_chunks00 WHERE rowid = ?').pluck();
  return function* (namespaceId, dimensions) {
    for (const { chunk, cell, validity, rowids } of chunks.all(namespaceId)) {
      const blob = vectors.get(chunk);
      if (!blob) continue;
      const slots = Math.min(validity.length * 8, rowids.length / 8, blob.length / (dimensions * 4));
      for (let slot = 0; slot < slots; slot++) {
        if ((validity[slot >> 3] & (1 << (slot & 7))) === 0) continue;
        const start = blob.byteOffset + slot * dimensions * 4;
        const vector = start % 4 === 0 ? new Float32Array(blob.buffer, start, dimensions) : new Float32Array(blob.buffer.slice(start, start + dimensions * 4));
        yield { rowid: Number(rowids.readBigInt64LE(slot * 8)), cell, vector };
      }
    }
  };
}
