// Compact codes of one namespace's vectors, ONE copy for every pool thread: each vector as int8
// values (scaled to its largest component) kept in IVF cell order in a shared WebAssembly
// memory, so a query scans many cells for the price vec0 pays for a few (~20 ns a 256-d vector
// against ~300 ns). The scan only shortlists: the caller re-ranks the best few hundred with the
// stored float vectors, so the answer's scores stay exact.
//
// One writer (a background pool task, sqlite/vector-codes.ts) fills a store and hands it out;
// any number of reader threads scan it meanwhile. Readers never wait and never lock:
//   - the part in cell order is written before the store is first handed out, then never changes;
//   - vectors found later are appended after it, each written whole before `count` (read and
//     written with Atomics) says it is there, so a reader sees a vector entirely or not at all;
//   - a store never grows or shrinks: a bigger one is built and handed out instead, and the old
//     memory is freed once no thread holds it (the engine's garbage collector counts the holders).
// Each reader scores into a scratch slot of its own (query, scores), taken with a compare-and-swap.
import { Int8Kernel, queryLimit, sharedMemory, strideFor, type WasmMemory } from './int8-kernel.js';
import { SHARED_CODES_RETIRED, type CodesRefresh, type SharedCodesHandle } from '../../shared/protocol/pool.js';

export type { CodesRefresh, SharedCodesHandle };

/** One vector to hold: its rowid, its IVF cell, its float components. */
export interface CodedVector {
  rowid: number;
  cell: number;
  vector: Float32Array;
}

/** Threads that may scan one store at the same moment, each with its own scratch. */
const READER_SLOTS = 64;
/**
 * Codes scored per kernel call, at most: a slot holds a record (16 bytes) for each, since the
 * first call of a scan may find every code above its threshold (−∞). A store's run is its mean
 * cell rounded up to a power of two, within these bounds (scoreRunFor), so most cells take one
 * call and a small store's 64 slots stay small: at 2,048 for every store, the scratch was 2 MiB,
 * +24% on a 20k × 256-d store. Any run gives the same shortlist (the kernel keeps what the heap
 * would take); only the number of calls changes.
 */
const SCORE_RUN_MIN = 256;
const SCORE_RUN_MAX = 2048;
/** A store's run: its mean cell (capacity over cell slots), rounded up to a power of two, within the bounds. */
export const scoreRunFor = (capacity: number, cellSlots: number) =>
  Math.min(SCORE_RUN_MAX, Math.max(SCORE_RUN_MIN, 2 ** Math.ceil(Math.log2(Math.max(1, capacity / cellSlots)))));
/** Int32 header fields. */
const COUNT = 0;
const ORDERED = 1;
const LIVE = 2;
const RANGES = 3;
const RETIRED = SHARED_CODES_RETIRED;
/**
 * Scans the store has served, counted by the readers (which store a recall scanned: tests,
 * diagnostics). One atomic add per scan, beside a scan of up to ~300k codes: nothing measurable.
 */
const SCANS = RETIRED + 1;
const SLOT_LOCKS = 16;
const HEADER_BYTES = 4 * (SLOT_LOCKS + READER_SLOTS);

const align = (n: number, to: number) => Math.ceil(n / to) * to;

interface Layout {
  stride: number;
  rangesAt: number;
  slotsAt: number;
  slotBytes: number;
  /** Codes scored per kernel call (scoreRunFor). */
  scoreRun: number;
  rowidsAt: number;
  scalesAt: number;
  cellsAt: number;
  codesAt: number;
  bytes: number;
}

function layoutOf(dimensions: number, capacity: number, cellSlots: number): Layout {
  const stride = strideFor(dimensions);
  const rangesAt = align(HEADER_BYTES, 16);
  const slotsAt = align(rangesAt + 12 * cellSlots, 16);
  // A slot: the query as int16, then the scores of one run (16-byte records: position and
  // float64 score of the codes above the threshold).
  const scoreRun = scoreRunFor(capacity, cellSlots);
  const slotBytes = align(2 * stride + 16 * scoreRun, 16);
  const rowidsAt = align(slotsAt + READER_SLOTS * slotBytes, 16);
  const scalesAt = rowidsAt + 8 * capacity;
  const cellsAt = scalesAt + 4 * capacity;
  const codesAt = align(cellsAt + 4 * capacity, 16);
  return { stride, rangesAt, slotsAt, slotBytes, scoreRun, rowidsAt, scalesAt, cellsAt, codesAt, bytes: codesAt + capacity * stride };
}

/** Bytes a store for `count` vectors of `dimensions` over `cellSlots` cells takes (budgeting before a build). */
export function codeBytesFor(count: number, dimensions: number, cellSlots: number): number {
  return layoutOf(dimensions, count, cellSlots).bytes;
}

/** Room to grow into before the next build: an eighth more (at least 1,024 vectors). */
export const headroom = (count: number) => Math.max(1024, Math.ceil(count / 8));

/** Typed views of one store's memory. */
class Views {
  readonly header: Int32Array;
  readonly ranges: Int32Array;
  readonly rowids: Float64Array;
  readonly scales: Float32Array;
  readonly cells: Int32Array;
  readonly codes: Int8Array;
  readonly layout: Layout;

  constructor(readonly memory: WasmMemory, dimensions: number, readonly capacity: number, readonly cellSlots: number) {
    this.layout = layoutOf(dimensions, capacity, cellSlots);
    const { buffer } = memory;
    if (buffer.byteLength < this.layout.bytes) throw new Error('vector codes: memory smaller than its layout');
    this.header = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    this.ranges = new Int32Array(buffer, this.layout.rangesAt, 3 * cellSlots);
    this.rowids = new Float64Array(buffer, this.layout.rowidsAt, capacity);
    this.scales = new Float32Array(buffer, this.layout.scalesAt, capacity);
    this.cells = new Int32Array(buffer, this.layout.cellsAt, capacity);
    this.codes = new Int8Array(buffer, this.layout.codesAt, capacity * this.layout.stride);
  }
}

let nextId = 1;
/** Unique across threads: the thread's id in the high bits (a store is built by one thread). */
const storeId = (threadId: number) => threadId * 2 ** 32 + nextId++;

/**
 * The writer's side: fills a new store in cell order (a full build), hands it out, and appends
 * the vectors found later. One writer per store at a time.
 */
export class CodesWriter {
  private readonly v: Views;
  private count = 0;
  private ordered = 0;
  private sealed = false;
  private rangeCount = 0;

  private constructor(readonly handle: SharedCodesHandle, fresh: boolean) {
    this.v = new Views(handle.memory, handle.dimensions, handle.capacity, handle.cellSlots);
    if (!fresh) {
      this.count = Atomics.load(this.v.header, COUNT);
      this.ordered = Atomics.load(this.v.header, ORDERED);
      this.rangeCount = Atomics.load(this.v.header, RANGES);
      this.sealed = true;
    }
  }

  /** A new empty store, or null where the memory cannot be had (no WebAssembly SIMD, over 4 GiB, out of memory). */
  static create(dimensions: number, capacity: number, cellSlots: number, generations: number[], threadId: number): CodesWriter | null {
    capacity = Math.max(1, capacity);
    cellSlots = Math.max(1, cellSlots);
    const memory = sharedMemory(codeBytesFor(capacity, dimensions, cellSlots));
    if (!memory) return null;
    return new CodesWriter({
      memory, id: storeId(threadId), dimensions, capacity, cellSlots, generations, seq: 0,
    }, true);
  }

  /** Continues a store handed out before (appends only). */
  static resume(handle: SharedCodesHandle): CodesWriter {
    return new CodesWriter(handle, false);
  }

  get size(): number {
    return this.count;
  }

  get capacity(): number {
    return this.v.capacity;
  }

  get unordered(): number {
    return this.count - this.ordered;
  }

  get bytes(): number {
    return this.v.layout.bytes;
  }

  /**
   * Adds a vector; false when the store is full (build a bigger one). Before `publish`, vectors
   * given in cell order extend the ordered part; afterwards every vector goes to the tail, which
   * readers scan whole, checking each one's cell.
   */
  add({ rowid, cell, vector }: CodedVector): boolean {
    if (vector.length !== this.handle.dimensions) return true;
    if (this.count === this.v.capacity) return false;
    const i = this.count;
    const { stride } = this.v.layout;
    this.v.rowids[i] = rowid;
    this.v.cells[i] = cell;
    this.v.scales[i] = encode(vector, this.v.codes, i * stride, stride);
    this.count++;
    if (!this.sealed && this.ordered === i && (i === 0 || this.v.cells[i - 1] <= cell)) {
      const last = this.rangeCount - 1;
      if (last >= 0 && this.v.ranges[3 * last] === cell) this.v.ranges[3 * last + 2] = i + 1;
      else if (this.rangeCount < this.v.cellSlots) {
        this.v.ranges.set([cell, i, i + 1], 3 * this.rangeCount++);
      } else {
        this.count--; // no range left for a new cell: keep it in the tail instead
        this.sealed = true;
        return this.add({ rowid, cell, vector });
      }
      this.ordered++;
    } else {
      this.sealed = true;
    }
    return true;
  }

  /** Makes what was added visible to readers (the ordered part is fixed from the first call). */
  publish(live: number): SharedCodesHandle {
    this.sealed = true;
    Atomics.store(this.v.header, RANGES, this.rangeCount);
    Atomics.store(this.v.header, ORDERED, this.ordered);
    Atomics.store(this.v.header, LIVE, live);
    Atomics.store(this.v.header, COUNT, this.count);
    return this.handle;
  }
}

/** A scan's shortlist. */
export interface Shortlist {
  /** Best first by the codes' scores. */
  rowids: number[];
  /**
   * The cosine with the query of the lowest code kept (by its code), when the probed cells held
   * at least n codes, so more could be had; −∞ when they held fewer (a wider scan adds nothing).
   */
  lastSimilarity(): number;
}

/** A reader's side of a store: its own kernel instance over the shared memory. */
export class CodesReader {
  private readonly v: Views;
  private readonly kernel: Int8Kernel;
  private readonly cellRanges = new Map<number, { from: number; to: number }>();
  private readonly ordered: number;

  private constructor(readonly handle: SharedCodesHandle, kernel: Int8Kernel) {
    this.v = new Views(handle.memory, handle.dimensions, handle.capacity, handle.cellSlots);
    this.kernel = kernel;
    this.ordered = Atomics.load(this.v.header, ORDERED);
    const ranges = Atomics.load(this.v.header, RANGES);
    for (let r = 0; r < ranges; r++) this.cellRanges.set(this.v.ranges[3 * r], { from: this.v.ranges[3 * r + 1], to: this.v.ranges[3 * r + 2] });
  }

  /** A reader of the store, or null where the kernel cannot run here. */
  static attach(handle: SharedCodesHandle): CodesReader | null {
    const kernel = Int8Kernel.over(handle.memory, strideFor(handle.dimensions));
    if (!kernel) return null;
    try {
      return new CodesReader(handle, kernel);
    } catch {
      return null;
    }
  }

  get size(): number {
    return Atomics.load(this.v.header, COUNT);
  }

  /** The main thread replaced or dropped the store: let it go. */
  get retired(): boolean {
    return Atomics.load(this.v.header, RETIRED) === 1;
  }

  /** Vectors held per vector still in the namespace (≥ 1): deleted and replaced ones stay until a rebuild. */
  get deadRatio(): number {
    const live = Atomics.load(this.v.header, LIVE);
    return live > 0 ? Math.max(1, this.size / live) : 1;
  }

  /**
   * Rowids of up to `n` vectors in `cells` most similar to `query` by their codes, best first
   * (approximate: a shortlist for an exact re-rank); null when every scratch slot is taken.
   */
  nearest(query: Float32Array, cells: readonly number[], n: number): Shortlist | null {
    const count = this.size;
    if (query.length !== this.handle.dimensions || n <= 0 || count === 0) return { rowids: [], lastSimilarity: () => -Infinity };
    const slot = this.takeSlot();
    if (slot < 0) return null;
    Atomics.add(this.v.header, SCANS, 1);
    try {
      const { layout } = this.v;
      const queryAt = layout.slotsAt + slot * layout.slotBytes;
      const scoresAt = queryAt + 2 * layout.stride;
      const buffer = this.v.memory.buffer;
      encodeQuery(query, new Int16Array(buffer, queryAt, layout.stride));
      const top = new TopScores(n);
      // The kernel keeps only the codes above the lowest of the n best so far: JavaScript sees
      // a few hundred of the ~300k scores, and offers them in scan order, as a loop over all would.
      const { scoreRun } = layout;
      const positions = new Int32Array(buffer, scoresAt, 4 * scoreRun);
      const found = new Float64Array(buffer, scoresAt, 2 * scoreRun);
      const take = (from: number, to: number, wanted: ((i: number) => boolean) | null) => {
        for (let start = from; start < to; start += scoreRun) {
          const run = Math.min(scoreRun, to - start);
          const above = this.kernel.above(queryAt, layout.codesAt + start * layout.stride, run, layout.scalesAt + 4 * start, top.threshold, scoresAt);
          for (let k = 0; k < above; k++) {
            const i = start + positions[4 * k];
            if (wanted && !wanted(i)) continue;
            top.offer(found[2 * k + 1], i);
          }
        }
      };
      for (const cell of cells) {
        const range = this.cellRanges.get(cell);
        if (range) take(range.from, range.to, null);
      }
      if (count > this.ordered) {
        const probed = new Set(cells);
        take(this.ordered, count, (i) => probed.has(this.v.cells[i]));
      }
      const last = top.lowest;
      // Worked out only when asked (a short re-rank): the codes it reads never change.
      return { rowids: top.indexes().map((i) => this.v.rowids[i]), lastSimilarity: () => (last < 0 ? -Infinity : this.similarity(query, last)) };
    } finally {
      Atomics.store(this.v.header, SLOT_LOCKS + slot, 0);
    }
  }

  /** Cosine of `query` with code `i` as stored (int8: within a few thousandths of the vector's own, docs/vector-codes.md). */
  private similarity(query: Float32Array, i: number): number {
    const at = i * this.v.layout.stride;
    let product = 0;
    let codeNorm = 0;
    let queryNorm = 0;
    for (let d = 0; d < query.length; d++) {
      const c = this.v.codes[at + d];
      product += query[d] * c;
      codeNorm += c * c;
      queryNorm += query[d] * query[d];
    }
    return product / Math.sqrt(codeNorm * queryNorm);
  }

  private takeSlot(): number {
    for (let slot = 0; slot < READER_SLOTS; slot++) {
      if (Atomics.compareExchange(this.v.header, SLOT_LOCKS + slot, 0, 1) === 0) return slot;
    }
    return -1;
  }
}

/** How many scans the store has served, from any thread (read from its memory: no reader needed). */
export function scansServed(handle: Pick<SharedCodesHandle, 'memory'>): number {
  return Atomics.load(new Int32Array(handle.memory.buffer, 0, SCANS + 1), SCANS);
}

/** Writes `vector` as int8 at `offset` (scaled so its largest component is ±127); returns the scale back to floats. */
function encode(vector: Float32Array, codes: Int8Array, offset: number, stride: number): number {
  codes.fill(0, offset, offset + stride);
  let largest = 0;
  for (let d = 0; d < vector.length; d++) largest = Math.max(largest, Math.abs(vector[d]));
  if (largest === 0) return 0;
  const toCode = 127 / largest;
  for (let d = 0; d < vector.length; d++) codes[offset + d] = Math.round(vector[d] * toCode);
  return largest / 127;
}

/** The query as int16 (the kernel multiplies int8 codes by it); its own scale is the same for every vector, so dropped. */
function encodeQuery(query: Float32Array, out: Int16Array): void {
  let largest = 0;
  for (let d = 0; d < query.length; d++) largest = Math.max(largest, Math.abs(query[d]));
  const toCode = largest === 0 ? 0 : queryLimit(out.length) / largest;
  out.fill(0);
  for (let d = 0; d < query.length; d++) out[d] = Math.round(query[d] * toCode);
}

/** The `n` highest scores offered (a min-heap on score), with the index each came with. */
class TopScores {
  private readonly score: Float64Array;
  private readonly index: Int32Array;
  private size = 0;

  constructor(private readonly n: number) {
    this.score = new Float64Array(n);
    this.index = new Int32Array(n);
  }

  offer(score: number, index: number): void {
    if (this.size < this.n) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.score[parent] <= score) break;
        this.score[i] = this.score[parent];
        this.index[i] = this.index[parent];
        i = parent;
      }
      this.score[i] = score;
      this.index[i] = index;
      return;
    }
    if (score <= this.score[0]) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.n) break;
      const child = left + 1 < this.n && this.score[left + 1] < this.score[left] ? left + 1 : left;
      if (this.score[child] >= score) break;
      this.score[i] = this.score[child];
      this.index[i] = this.index[child];
      i = child;
    }
    this.score[i] = score;
    this.index[i] = index;
  }

  /** The index with the lowest score once n are held (the next to leave); −1 before. */
  get lowest(): number {
    return this.size < this.n ? -1 : this.index[0];
  }

  /** Scores at or below this cannot enter (−∞ until n are held). */
  get threshold(): number {
    return this.size < this.n ? -Infinity : this.score[0];
  }

  /** The indexes kept, highest score first. */
  indexes(): number[] {
    const order = Array.from({ length: this.size }, (_, i) => i).sort((a, b) => this.score[b] - this.score[a]);
    return order.map((i) => this.index[i]);
  }
}
