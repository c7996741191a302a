// Compact in-memory codes of one namespace's vectors, held by one pool thread: each vector as
// int8 values (scaled to its largest component) kept in IVF cell order, so a query scans many
// cells for the price vec0 pays for a few (~20 ns a 256-d vector against ~300 ns). The scan
// only shortlists: the caller re-ranks the best few hundred with the stored float vectors, so
// the answer's scores stay exact. Pure memory; the SQLite adapter (sqlite/vector-codes.ts)
// loads and refreshes it.
import { Int8Kernel, queryLimit, strideFor } from './int8-kernel.js';

/** One vector to hold: its rowid, its IVF cell, its float components. */
export interface CodedVector {
  rowid: number;
  cell: number;
  vector: Float32Array;
}

/** Bytes held per vector besides its code: rowid (8), scale (4), cell (4). */
const PER_VECTOR_BYTES = 16;

/** Bytes room for `count` vectors of `dimensions` takes (budgeting before a load): codes, scores, the rest. */
export function codeBytesFor(count: number, dimensions: number): number {
  const stride = strideFor(dimensions);
  return 2 * stride + count * (stride + 4 + PER_VECTOR_BYTES);
}

export class VectorCodes {
  private kernel: Int8Kernel;
  private rowids: Float64Array;
  private scales: Float32Array;
  private cells: Int32Array;
  /** Vectors held; those below `ordered` are in cell order (ranges in `cellRanges`), the rest appended since. */
  private count = 0;
  private ordered = 0;
  private cellRanges = new Map<number, { from: number; to: number }>();
  private readonly stride: number;

  private constructor(readonly dimensions: number, kernel: Int8Kernel) {
    this.stride = kernel.stride;
    this.kernel = kernel;
    this.rowids = new Float64Array(kernel.capacity);
    this.scales = new Float32Array(kernel.capacity);
    this.cells = new Int32Array(kernel.capacity);
  }

  /** Room for `capacity` vectors, or null where the WebAssembly kernel cannot run. */
  static create(dimensions: number, capacity: number): VectorCodes | null {
    const kernel = Int8Kernel.create(strideFor(dimensions), capacity);
    return kernel ? new VectorCodes(dimensions, kernel) : null;
  }

  get size(): number {
    return this.count;
  }

  /** Memory held, in bytes (the kernel's linear memory and the per-vector arrays). */
  get bytes(): number {
    return this.kernel.bytes + this.kernel.capacity * PER_VECTOR_BYTES;
  }

  /** Vectors appended since the cells were last put in order. */
  get unordered(): number {
    return this.count - this.ordered;
  }

  /**
   * Adds a vector. Appended in cell order (as a load reads them) they extend the ordered
   * part; otherwise they wait in the tail, which every query scans whole until `order()`.
   */
  add({ rowid, cell, vector }: CodedVector): void {
    if (vector.length !== this.dimensions) return;
    const i = this.append(rowid, cell);
    this.scales[i] = encode(vector, this.kernel.codes, i * this.stride);
  }

  /** Takes the next slot for a vector of `cell` (its code and scale are the caller's to write). */
  private append(rowid: number, cell: number): number {
    if (this.count === this.kernel.capacity) this.grow();
    const i = this.count++;
    this.rowids[i] = rowid;
    this.cells[i] = cell;
    if (this.ordered === i && (i === 0 || this.cells[i - 1] <= cell)) {
      this.ordered++;
      const range = this.cellRanges.get(cell);
      if (range) range.to = i + 1;
      else this.cellRanges.set(cell, { from: i, to: i + 1 });
    }
    return i;
  }

  /** Puts every vector back in cell order (after many were appended). */
  order(): void {
    const order = Array.from({ length: this.count }, (_, i) => i).sort((a, b) => this.cells[a] - this.cells[b] || a - b);
    const next = VectorCodes.create(this.dimensions, this.count + headroom(this.count))!;
    const { codes } = this.kernel;
    for (const i of order) {
      const at = next.append(this.rowids[i], this.cells[i]);
      // Copy the code and scale as they are: re-encoding would need the float vector.
      next.kernel.codes.set(codes.subarray(i * this.stride, (i + 1) * this.stride), at * this.stride);
      next.scales[at] = this.scales[i];
    }
    Object.assign(this, { kernel: next.kernel, rowids: next.rowids, scales: next.scales, cells: next.cells, count: next.count, ordered: next.ordered, cellRanges: next.cellRanges });
  }

  /**
   * Rowids of up to `n` vectors in `cells` most similar to `query` by their codes, best first
   * (approximate: a shortlist for an exact re-rank).
   */
  nearest(query: Float32Array, cells: readonly number[], n: number): number[] {
    if (query.length !== this.dimensions || n <= 0 || this.count === 0) return [];
    encodeQuery(query, this.kernel.query);
    const top = new TopScores(n);
    const { scores } = this.kernel;
    const take = (from: number, to: number, wanted: ((i: number) => boolean) | null) => {
      this.kernel.dots(from, to - from);
      for (let i = from; i < to; i++) {
        if (wanted && !wanted(i)) continue;
        top.offer(scores[i] * this.scales[i], i);
      }
    };
    for (const cell of cells) {
      const range = this.cellRanges.get(cell);
      if (range) take(range.from, range.to, null);
    }
    if (this.count > this.ordered) {
      const probed = new Set(cells);
      take(this.ordered, this.count, (i) => probed.has(this.cells[i]));
    }
    return top.indexes().map((i) => this.rowids[i]);
  }

  private grow(): void {
    const bigger = VectorCodes.create(this.dimensions, this.count + headroom(this.count))!;
    bigger.kernel.codes.set(this.kernel.codes.subarray(0, this.count * this.stride));
    bigger.rowids.set(this.rowids.subarray(0, this.count));
    bigger.scales.set(this.scales.subarray(0, this.count));
    bigger.cells.set(this.cells.subarray(0, this.count));
    this.kernel = bigger.kernel;
    this.rowids = bigger.rowids;
    this.scales = bigger.scales;
    this.cells = bigger.cells;
  }
}

/** Room to grow into before the next copy: an eighth more (at least 1,024 vectors). */
export const headroom = (count: number) => Math.max(1024, Math.ceil(count / 8));

/** Writes `vector` as int8 at `offset` (scaled so its largest component is ±127); returns the scale back to floats. */
function encode(vector: Float32Array, codes: Int8Array, offset: number): number {
  if (vector.length === 0) return 0;
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

  /** The indexes kept, highest score first. */
  indexes(): number[] {
    const order = Array.from({ length: this.size }, (_, i) => i).sort((a, b) => this.score[b] - this.score[a]);
    return order.map((i) => this.index[i]);
  }
}
