// One namespace's shared vector codes (ivf/vector-codes.ts) over the SQLite file, in two halves:
//
// BUILDING (refreshVectorCodes) runs as a background pool task, off the request path: the main
// thread's registry (core/pool/vector-codes-registry.ts) hands it the store it holds, and gets
// back the same store with the vectors attached since appended, or a new one built from every vector:
//   - no store yet, or its IVF generation retired: built from every vector, in the new cells;
//   - every vector moved into a generation the store does not use yet (the indexer refreshes
//     before it retires the old one, so recall keeps the codes through a retrain);
//   - deleted or replaced vectors past a tenth of those held, the tail of appended vectors past
//     an eighth, or the store full: built again (where deleted and replaced vectors leave);
//   - otherwise the vectors attached since its watermark are appended: every attachment is
//     stamped by the writer with a number that only grows (memories.vector_seq, migration 14), so
//     one index range finds new memories and re-embedded old ones alike, and a memory still
//     waiting for its vector holds nothing back.
// A full build reads vec0's chunks directly (see vectorChunks): its own scan looks each vector up
// on its own, ~10 µs a vector (10 s per 1M), where the chunks take ~2 µs.
//
// READING (NamespaceVectorCodes) runs in each interactive thread: a recall is handed the
// registry's store for its namespace with the task, in its own context (RecallCodes), attaches
// to it for that recall only (no copy: the memory is shared) and scans it. It never builds or waits: without a store, or one of a
// retired generation, recall scans vec0 as before. Vectors attached after the store's watermark
// are read from the file (memories_by_vector_seq) and re-ranked with the shortlist, so a memory
// is found by its vector as soon as it has one.
import { unmapped, type Db } from '../../shared/db.js';
import { prepareOnce } from '../../shared/connection-statements.js';
import { float32FromBlob } from '../../shared/meta.js';
import { CodesReader, CodesWriter, codeBytesFor, headroom, type CodedVector, type CodesRefresh, type SharedCodesHandle, type Shortlist } from '../ivf/vector-codes.js';
import { retiredCell, trueCellSql } from '../../shared/sql-schema.js';
import type { VectorCells } from './ivf-cells.js';
import type { RecallCodes } from '../port/candidates.js';

export type { CodesRefresh, SharedCodesHandle };

/** Vectors held per live one above which the store is built again (deleted and replaced memories). */
const DEAD_RATIO_TO_REBUILD = 1.1;
/** Vectors attached after the store's watermark one recall reads beside the shortlist; past it, vec0. */
const FRESH_MAX = 4096;

interface VectorRow {
  rowid: number;
  cell: number;
  embedding: Buffer | null;
}

/**
 * The namespace's store brought up to date with the file (see the header); `limitBytes` is the
 * most a new store may take (`neededBytes` says what one would have needed when it did not fit).
 * Runs in a background pool thread, in one read transaction: one snapshot of the file.
 */
export function refreshVectorCodes(db: Db, namespaceId: number, cells: VectorCells, previous: SharedCodesHandle | null, limitBytes: number, threadId: number): CodesRefresh {
  db.exec('BEGIN');
  try { return refreshInSnapshot(db, namespaceId, cells, previous, limitBytes, threadId); } finally { db.exec('COMMIT'); }
}
function refreshInSnapshot(db: Db, namespaceId: number, cells: VectorCells, previous: SharedCodesHandle | null, limitBytes: number, threadId: number): CodesRefresh {
  const none: CodesRefresh = { handle: null, outcome: 'none', vectors: 0, bytes: 0 };
  const generations = cells.current();
  if (generations.length === 0) return none;
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
    const appended = appendSince(s, namespaceId, writer, previous, used);
    const newest = generations[generations.length - 1];
    const stale = writer.size > live * DEAD_RATIO_TO_REBUILD || writer.unordered > Math.max(4096, writer.size / 8)
      // Codes filed under an older generation while every vector has moved to the newest: built
      // there, the store outlives the old generation's retirement.
      || (previous.generations.some((g) => g !== newest.generation) && s.outside.get(namespaceId, newest.cells[0]) === 0);
    if (appended !== 'full' && !stale) {
      return { handle: writer.publish(live), outcome: 'appended', vectors: writer.size, bytes: writer.bytes };
    }
  }
  // Every cell of every installed generation, and the unassigned one.
  const cellSlots = generations.reduce((n, g) => n + g.cells.length, 1);
  const capacity = live + headroom(live);
  const neededBytes = codeBytesFor(capacity, dimensions, cellSlots);
  if (neededBytes > limitBytes) return { ...none, neededBytes };
  const writer = CodesWriter.create(dimensions, capacity, cellSlots, [], threadId);
  if (!writer) return none;
  const handle = writer.handle;
  // Everything attached up to here is in this snapshot, so in the build.
  handle.seq = s.newestSeq.get(namespaceId) ?? 0;
  const chunks = vectorChunks(db);
  // Read through SQLite's page cache, not the memory map: mapped, every vector page read (~1 GiB
  // per 1M 256-d vectors) would stay counted in the service's resident memory, for pages read once.
  const remap = unmapped(db);
  try {
    for (const row of chunks ? chunks(namespaceId, dimensions) : rows(s, namespaceId)) {
      if (!writer.add(row)) break; // cannot happen in one snapshot (capacity ≥ live); a later refresh builds again
      used(handle, row.cell);
    }
  } finally {
    remap();
  }
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
      newestSeq: db.prepare<[number], number | null>(
        'SELECT max(vector_seq) FROM memories INDEXED BY memories_by_vector_seq WHERE namespace_id = ? AND embedded = 1 AND vector_seq IS NOT NULL').pluck(),
      // The vectors attached after a watermark, in the order they were.
      since: db.prepare<[number, number], VectorRow & { seq: number }>(`
        SELECT m.rowid AS rowid, m.vector_cell AS cell, m.vector_seq AS seq, v.embedding AS embedding
        FROM memories m INDEXED BY memories_by_vector_seq CROSS JOIN memory_vectors v ON v.rowid = m.rowid
        WHERE m.namespace_id = ? AND m.embedded = 1 AND m.vector_seq > ? ORDER BY m.vector_seq`),
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
 * Appends the vectors attached since the store's watermark and moves it; 'full' when the store
 * ran out of room. A re-embedded memory's old code stays: the re-rank scores its current vector,
 * once (DISTINCT), and the next full build drops the old code.
 */
function appendSince(
  s: Statements, namespaceId: number, writer: CodesWriter, handle: SharedCodesHandle, used: (handle: SharedCodesHandle, cell: number) => void,
): boolean | 'full' {
  let changed = false;
  for (const row of s.since.iterate(namespaceId, handle.seq)) {
    if (!row.embedding) continue;
    if (!writer.add({ rowid: row.rowid, cell: row.cell, vector: float32FromBlob(row.embedding) })) return 'full';
    used(handle, row.cell);
    handle.seq = row.seq;
    changed = true;
  }
  return changed;
}

/**
 * A pool thread's access to one namespace's shared store. It keeps no store: each recall brings
 * the one its task was lent (RecallCodes, in the recall's context) and its reader lives as long
 * as that recall's context, so recalls running at once on one thread (an endpoint embedder)
 * each scan their own store, and a store the registry let go is reachable from no thread once
 * the tasks lent it have settled.
 */
export class NamespaceVectorCodes {
  private readonly fresh;
  /** The reader of each recall's store, attached at its first scan (weak: it goes with the recall's context). */
  private readonly readers = new WeakMap<RecallCodes, CodesReader | null>();

  constructor(db: Db, private readonly cells: VectorCells) {
    // The namespace's vectors attached after the watermark (memories_by_vector_seq): only this
    // namespace's newest, however much other namespaces wrote. Prepared once per connection.
    this.fresh = prepareOnce<[number, number], { rowid: number; cell: number }>(db, `
      SELECT rowid, vector_cell AS cell FROM memories INDEXED BY memories_by_vector_seq
      WHERE namespace_id = ? AND embedded = 1 AND vector_seq > ?
      LIMIT ${FRESH_MAX + 1}`);
  }

  /**
   * The store this recall was lent, to scan; null when the recall should scan vec0 (none lent,
   * or its generation retired). An indexed namespace without a store to scan is noted on the
   * recall (`wanted`), so the registry may build one.
   */
  current(codes: RecallCodes | undefined): CodesReader | null {
    const generations = this.cells.current();
    const reader = codes ? this.readerOf(codes) : null;
    const installed = new Set(generations.map((g) => g.generation));
    const usable = reader !== null && installed.size > 0 && reader.handle.generations.every((g) => installed.has(g));
    if (!usable && codes && generations.length > 0) codes.wanted = true;
    return usable ? reader : null;
  }

  private readerOf(codes: RecallCodes): CodesReader | null {
    if (!codes.handle) return null;
    let reader = this.readers.get(codes);
    if (reader === undefined) this.readers.set(codes, (reader = CodesReader.attach(codes.handle)));
    return reader;
  }

  /**
   * Up to `n` candidates for the exact re-rank: the store's shortlist, widened by the share of
   * dead vectors it holds, and the vectors attached after it in the probed cells (`lastSimilarity`:
   * the store's, see Shortlist). Null when recall should scan vec0 (more vectors attached since
   * the store than FRESH_MAX, or no scratch slot free).
   */
  shortlist(reader: CodesReader, namespaceId: number, query: Float32Array, probed: number[], n: number): Shortlist | null {
    const fresh = this.fresh.all(namespaceId, reader.handle.seq);
    if (fresh.length > FRESH_MAX) return null;
    const wanted = Math.min(4 * n, Math.ceil(n * reader.deadRatio));
    const near = reader.nearest(query, probed, wanted);
    if (!near) return null;
    const cells = new Set(probed);
    for (const row of fresh) if (cells.has(row.cell)) near.rowids.push(row.rowid);
    return near;
  }
}

/**
 * A chunk's IVF cell: a retired twin (negative: a superseded fact, docs/superseded-vectors.md)
 * counts as its true cell, so the build still meets the cells in order (out of order, vectors
 * would go to the store's unordered tail, which every query scans whole).
 */
const TRUE_CELL_SQL = trueCellSql('partition01');

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
    WHERE partition00 = ? ORDER BY ${TRUE_CELL_SQL}, chunk_id`);
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
        // A retired twin (a superseded fact, docs/superseded-vectors.md) is coded in its true
        // cell: the codes' shortlist keeps superseded rows and the re-rank filters them, as before.
        yield { rowid: Number(rowids.readBigInt64LE(slot * 8)), cell: cell < 0 ? retiredCell(cell) : cell, vector };
      }
    }
  };
}
