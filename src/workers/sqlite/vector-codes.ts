// One namespace's shared vector codes (ivf/vector-codes.ts) over the SQLite file, in two halves:
//
// BUILDING (refreshVectorCodes) runs as a background pool task, off the request path: the main
// thread's registry (core/vector-codes-registry.ts) hands it the store it holds, and gets back
// the same store with the vectors embedded since appended, or a new one built from every vector:
//   - no store yet, or its IVF generation retired: built from every vector, in the new cells;
//   - every vector moved into a generation the store does not use yet (the indexer refreshes
//     before it retires the old one, so recall keeps the codes through a retrain);
//   - deleted or replaced vectors past a tenth of those held, the tail of appended vectors past
//     an eighth, the store full, or REBUILD_AFTER_MS since its last full build (refreshes follow
//     writes, so an idle namespace is not rebuilt): built again. A full build is where deleted
//     vectors leave, and a re-embedding no refresh saw waiting is taken in.
//   - otherwise vectors embedded above the rowid watermark are appended (AUTOINCREMENT rowids only
//     grow; the watermark stops below the first memory still waiting for its vector), and rows
//     seen waiting for a new vector below it are read again once embedded.
// A full build reads vec0's chunks directly (see vectorChunks): its own scan looks each vector up
// on its own, ~10 µs a vector (10 s per 1M), where the chunks take ~2 µs.
//
// READING (NamespaceVectorCodes) runs in each interactive thread: a recall is handed the
// registry's store for its namespace with the task, attaches to it once (no copy: the memory is
// shared), and scans it. It never builds or waits: without a store, or one of a retired
// generation, recall scans vec0 as before. Vectors embedded after the store's watermark are read
// from the file in the probed cells (memories_by_vector_cell) and re-ranked with the shortlist, so
// a memory is found by its vector as soon as it has one.
import type { Db } from '../../shared/db.js';
import { prepareOnce } from '../../shared/connection-statements.js';
import { float32FromBlob } from '../../shared/meta.js';
import { CodesReader, CodesWriter, codeBytesFor, headroom, type CodedVector, type CodesRefresh, type SharedCodesHandle } from '../ivf/vector-codes.js';
import type { VectorCells } from './ivf-cells.js';

export type { CodesRefresh, SharedCodesHandle };

/** A full build at least this often (ms) while the namespace changes: bounds how long a re-embedding can be missed. */
export const REBUILD_AFTER_MS = 10 * 60_000;
/** Vectors held per live one above which the store is built again (deleted and replaced memories). */
const DEAD_RATIO_TO_REBUILD = 1.1;
/** Fresh rows (above the watermark, in the probed cells) one recall re-ranks beside the shortlist; past it, vec0. */
const FRESH_MAX = 4096;

interface VectorRow {
  rowid: number;
  cell: number;
  embedding: Buffer | null;
}

/**
 * The namespace's store brought up to date with the file (see the header); `limitBytes` is the
 * most it may take. Runs in a background pool thread.
 */
export function refreshVectorCodes(db: Db, namespaceId: number, cells: VectorCells, previous: SharedCodesHandle | null, limitBytes: number, threadId: number, now = Date.now()): CodesRefresh {
  db.exec('BEGIN');
  try { return refreshInSnapshot(db, namespaceId, cells, previous, limitBytes, threadId, now); } finally { db.exec('COMMIT'); }
}
function refreshInSnapshot(
  db: Db, namespaceId: number, cells: VectorCells, previous: SharedCodesHandle | null, limitBytes: number, threadId: number, now = Date.now(),
): CodesRefresh {
  const none: CodesRefresh = { handle: null, outcome: 'none', vectors: 0, bytes: 0 };
  const generations = cells.current();
  if (generations.length === 0 || limitBytes <= 0) return none;
  const installed = new Set(generations.map((g) => g.generation));
  // The generations the store's vectors are filed under: it is valid while each is installed.
  const generationOf = new Map(generations.flatMap((g) => g.cells.map((cell) => [cell, g.generation] as const)));
  const used = (handle: SharedCodesHandle, cell: number) => {
    const generation = generationOf.get(cell);
    if (generation !== undefined && !handle.generations.includes(generation)) handle.generations.push(generation);
  };
  const dimensions = generations[0].centroids.dimensions;
  const s = statements(db);
  const live = s.embedded.get(namespaceId)!;
  if (previous && previous.dimensions === dimensions && previous.generations.every((g) => installed.has(g))) {
    const writer = CodesWriter.resume(previous);
    const changed = appendSince(s, namespaceId, writer, previous, used);
    const newest = generations[generations.length - 1];
    const stale = writer.size > live * DEAD_RATIO_TO_REBUILD || writer.unordered > Math.max(4096, writer.size / 8)
      || now - previous.builtAt > REBUILD_AFTER_MS
      // Codes filed under an older generation while every vector has moved to the newest: built
      // there, the store outlives the old generation's retirement.
      || (previous.generations.some((g) => g !== newest.generation) && s.outside.get(namespaceId, newest.cells[0]) === 0);
    if (changed !== 'full' && !stale) {
      return { handle: writer.publish(live), outcome: 'appended', vectors: writer.size, bytes: writer.bytes };
    }
  }
  // Every cell of every installed generation, and the unassigned one.
  const cellSlots = generations.reduce((n, g) => n + g.cells.length, 1);
  const capacity = live + headroom(live);
  if (codeBytesFor(capacity, dimensions, cellSlots) > limitBytes) return none;
  const writer = CodesWriter.create(dimensions, capacity, cellSlots, [], threadId);
  if (!writer) return none;
  const handle = writer.handle;
  handle.builtAt = now;
  // Rows from the first one still waiting for its vector up are the watermark's to watch.
  const firstUnembedded = s.firstUnembeddedAfter.get(namespaceId, 0) ?? null;
  const above: number[] = [];
  let highest = 0;
  const chunks = vectorChunks(db);
  // Read through SQLite's page cache, not the memory map: mapped, every vector page read (~1 GiB
  // per 1M 256-d vectors) would stay counted in the service's resident memory, for pages read once.
  const mmap = db.pragma('mmap_size', { simple: true }) as number;
  if (mmap > 0) db.pragma('mmap_size = 0');
  try {
    for (const row of chunks ? chunks(namespaceId, dimensions) : rows(s, namespaceId)) {
      if (!writer.add(row)) break; // vectors written since the count: the next refresh builds a bigger store
      used(handle, row.cell);
      highest = Math.max(highest, row.rowid);
      if (firstUnembedded !== null && row.rowid > firstUnembedded) above.push(row.rowid);
    }
  } finally {
    if (mmap > 0) db.pragma(`mmap_size = ${mmap}`);
  }
  handle.low = firstUnembedded === null ? highest : Math.min(highest, firstUnembedded - 1);
  handle.above = above;
  handle.reembedding = [];
  return { handle: writer.publish(live), outcome: 'built', vectors: writer.size, bytes: writer.bytes };
}

function prepare(db: Db) {
  return {
      embedded: db.prepare<[number], number>('SELECT count(*) FROM memories WHERE namespace_id = ? AND embedded = 1').pluck(),
      // Without vec0's chunk tables (another sqlite-vec layout): vec0 by rowid, in cell order.
      all: db.prepare<[number], VectorRow>(`
        SELECT m.rowid AS rowid, m.vector_cell AS cell, v.embedding AS embedding
        FROM memories m CROSS JOIN memory_vectors v ON v.rowid = m.rowid
        WHERE m.namespace_id = ? AND m.embedded = 1 ORDER BY m.vector_cell`),
      outside: db.prepare<[number, number], number>(
        'SELECT count(*) FROM memories WHERE namespace_id = ? AND embedded = 1 AND vector_cell < ?').pluck(),
      newestRowid: db.prepare<[], number | null>('SELECT max(rowid) FROM memories').pluck(),
      // A rowid range (+ keeps the namespace's indexes out of it: they would read every row).
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
  };
}
type Statements = ReturnType<typeof prepare>;
const prepared = new WeakMap<Db, Statements>();
function statements(db: Db): Statements {
  let s = prepared.get(db);
  if (!s) prepared.set(db, (s = prepare(db)));
  return s;
}

function* rows(s: Statements, namespaceId: number): Generator<CodedVector> {
  for (const row of s.all.iterate(namespaceId)) {
    if (row.embedding) yield { rowid: row.rowid, cell: row.cell, vector: float32FromBlob(row.embedding) };
  }
}

/**
 * Appends the vectors embedded since the store was last brought up to date, moving its
 * watermark; 'full' when the store ran out of room, true when anything changed.
 */
function appendSince(
  s: Statements, namespaceId: number, writer: CodesWriter, handle: SharedCodesHandle, used: (handle: SharedCodesHandle, cell: number) => void,
): boolean | 'full' {
  const above = new Set(handle.above);
  const reembedding = new Set(handle.reembedding);
  let changed = false;
  let highest = handle.low;
  for (const rowid of above) highest = Math.max(highest, rowid);
  for (const row of s.after.iterate(handle.low, namespaceId)) {
    highest = Math.max(highest, row.rowid);
    if (above.has(row.rowid) || !row.embedding) continue;
    if (!writer.add({ rowid: row.rowid, cell: row.cell, vector: float32FromBlob(row.embedding) })) return 'full';
    used(handle, row.cell);
    above.add(row.rowid);
    changed = true;
  }
  // An older memory whose content changed waits for a new vector: its old code stays (the
  // re-rank scores the new one exactly), and the new one is added once it is there.
  for (const rowid of s.unembeddedUpTo.iterate(namespaceId, handle.low)) reembedding.add(rowid);
  for (const rowid of reembedding) {
    const row = s.one.get(rowid, namespaceId);
    if (row?.embedded === 1 && row.embedding) {
      if (!writer.add({ rowid, cell: row.cell, vector: float32FromBlob(row.embedding) })) return 'full';
      used(handle, row.cell);
      changed = true;
    }
    if (!row || row.embedded === 1) reembedding.delete(rowid);
  }
  // Up to the newest row of the whole file, not only of this namespace: rows of other
  // namespaces past our newest would otherwise be scanned again after every write anywhere.
  highest = Math.max(highest, s.newestRowid.get() ?? 0);
  const waiting = s.firstUnembeddedAfter.get(namespaceId, handle.low) ?? null;
  const low = waiting === null ? highest : Math.min(highest, waiting - 1);
  if (low > handle.low) {
    handle.low = low;
    for (const rowid of above) if (rowid <= low) above.delete(rowid);
  }
  handle.above = [...above];
  handle.reembedding = [...reembedding];
  return changed;
}

/**
 * A pool thread's view of one namespace's shared store: the one the last task handed over,
 * attached once. Recall asks it for a shortlist.
 */
/** This thread's views holding a store: each recall lets go of those the main thread retired. */
const holding = new Set<NamespaceVectorCodes>();

export class NamespaceVectorCodes {
  private reader: CodesReader | null = null;
  private readonly fresh;

  constructor(db: Db, private readonly cells: VectorCells) {
    // Per probed cell a range of memories_by_vector_cell (namespace, cell, rowid): only this
    // namespace's newest rows are read, however much other namespaces wrote.
    // Prepared once per connection and shared by every namespace (connection-statements.ts).
    this.fresh = prepareOnce<[number, string, number], number>(db, `
      SELECT rowid FROM memories INDEXED BY memories_by_vector_cell
      WHERE namespace_id = ? AND embedded = 1 AND vector_cell IN (SELECT value FROM json_each(?)) AND rowid > ?
      LIMIT ${FRESH_MAX + 1}`, 'pluck');
  }

  /** The store the registry holds for the namespace now (null: none). Attaching is cheap; nothing is copied. */
  offer(handle: SharedCodesHandle | null): void {
    for (const view of holding) if (view.reader?.retired) view.let();
    if (!handle) this.let();
    else if (this.reader?.handle.id !== handle.id) {
      this.reader = CodesReader.attach(handle);
      if (this.reader) holding.add(this);
      else holding.delete(this);
    }
    // The same store, maybe appended to since: its watermark and generations are the latest.
    else Object.assign(this.reader.handle, { low: handle.low, generations: handle.generations });
  }

  private let(): void {
    this.reader = null;
    holding.delete(this);
  }

  /** The store to scan, or null when recall should scan vec0 (none handed over, or its generation retired). */
  current(): CodesReader | null {
    const reader = this.reader;
    if (!reader) return null;
    const installed = new Set(this.cells.current().map((g) => g.generation));
    return reader.handle.generations.every((g) => installed.has(g)) && installed.size > 0 ? reader : null;
  }

  /**
   * Up to `n` candidates for the exact re-rank: the store's shortlist, widened by the share of
   * dead vectors it holds, and the rows embedded after it in the probed cells. Null when recall
   * should scan vec0 (too many rows newer than the store, or no scratch slot free).
   */
  shortlist(reader: CodesReader, namespaceId: number, query: Float32Array, probed: number[], n: number): number[] | null {
    const fresh = this.fresh.all(namespaceId, JSON.stringify(probed), reader.handle.low);
    if (fresh.length > FRESH_MAX) return null;
    const wanted = Math.min(4 * n, Math.ceil(n * reader.deadRatio));
    const near = reader.nearest(query, probed, wanted);
    return near ? near.concat(fresh) : null;
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
