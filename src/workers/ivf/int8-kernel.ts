// The inner loop of the shared vector codes (vector-codes.ts): integer dot products of one
// int16 query against a run of int8 codes, in WebAssembly SIMD. A plain JavaScript loop over
// 256 dimensions costs ~0.6–1 µs a vector (no SIMD in V8's output), more than vec0's own scan
// (~0.3 µs); this kernel costs ~20 ns. It is assembled here from its opcodes (a few dozen)
// rather than shipped as a binary or compiled by a toolchain, so the package needs nothing new.
//
// above(query, codes, count, stride, out, scales, threshold) → found: for each of `count` codes
// of `stride` bytes from byte address `codes` (stride a multiple of 16), the int32 dot product
// Σ query[d] · code[d] — `query` holds `stride` int16 values, each within queryLimit(stride) so
// that Σ cannot overflow — times the code's float32 scale (from byte address `scales`), as
// float64 as JavaScript multiplies them. Only the codes scoring above `threshold` are written,
// from `out`, as 16-byte records (int32 position in the run, then at +8 the float64 score); it
// returns how many. The caller passes the lowest score of its full top-n, so almost nothing
// crosses back to JavaScript once the best cells have been scanned (a JS loop over every score
// cost as much as the dot products). A NaN score (a NaN scale, or 0 × ∞) is never above.

const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
};
const section = (id: number, bytes: number[]) => [id, ...uleb(bytes.length), ...bytes];
const vector = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const name = (text: string) => [...uleb(text.length), ...Buffer.from(text)];
const simd = (op: number, ...immediates: number[]) => [0xfd, ...uleb(op), ...immediates];
const get = (local: number) => [0x20, local];
const set = (local: number) => [0x21, local];
const tee = (local: number) => [0x22, local];

// Parameters, then locals: four i32, one f64, one v128.
const [QUERY, CODE, COUNT, STRIDE, OUT, SCALES, THRESHOLD, QUERY_AT, CODE_END, J, FOUND, SCORE, SUM] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
const I32 = 0x7f;
const F64 = 0x7c;
const V128 = 0x7b;
const OP = {
  block: [0x02, 0x40], loop: [0x03, 0x40], if: [0x04, 0x40], end: 0x0b, brIf: 0x0d, i32Eqz: 0x45, i32LtU: 0x49,
  i32Add: 0x6a, i32Sub: 0x6b, i32Shl: 0x74, i32Const: 0x41, i32Store: 0x36,
  f32Load: 0x2a, f64Store: 0x39, f64ConvertI32S: 0xb7, f64PromoteF32: 0xbb, f64Mul: 0xa2, f64Gt: 0x64,
  v128Load: 0x00, load8x8s: 0x01, v128Const: 0x0c, extractLane: 0x1b, i32x4Add: 174, dotI16: 186,
};
/** Eight int8 code values widened to int16, times eight query values, summed pairwise into four int32 lanes. */
const dotEight = (codeOffset: number, queryOffset: number) => [
  ...get(CODE), ...simd(OP.load8x8s, 3, codeOffset), ...get(QUERY_AT), ...simd(OP.v128Load, 4, queryOffset),
  ...simd(OP.dotI16), ...simd(OP.i32x4Add),
];
const lane = (i: number) => [...get(SUM), ...simd(OP.extractLane, i)];
const recordAt = [...get(OUT), ...get(FOUND), OP.i32Const, 4, OP.i32Shl, OP.i32Add];
const body = [
  ...OP.block, ...get(COUNT), OP.i32Eqz, OP.brIf, 0,
  ...OP.loop,
  ...simd(OP.v128Const, ...new Array<number>(16).fill(0)), ...set(SUM),
  ...get(QUERY), ...set(QUERY_AT),
  ...get(CODE), ...get(STRIDE), OP.i32Add, ...set(CODE_END),
  ...OP.loop,
  ...get(SUM), ...dotEight(0, 0), ...dotEight(8, 16), ...set(SUM),
  ...get(QUERY_AT), OP.i32Const, 32, OP.i32Add, ...set(QUERY_AT),
  ...get(CODE), OP.i32Const, 16, OP.i32Add, ...tee(CODE),
  ...get(CODE_END), OP.i32LtU, OP.brIf, 0,
  OP.end,
  ...lane(0), ...lane(1), OP.i32Add, ...lane(2), OP.i32Add, ...lane(3), OP.i32Add, OP.f64ConvertI32S,
  ...get(SCALES), ...get(J), OP.i32Const, 2, OP.i32Shl, OP.i32Add, OP.f32Load, 2, 0, OP.f64PromoteF32,
  OP.f64Mul, ...tee(SCORE), ...get(THRESHOLD), OP.f64Gt,
  ...OP.if,
  ...recordAt, ...get(J), OP.i32Store, 2, 0,
  ...recordAt, ...get(SCORE), OP.f64Store, 3, 8,
  ...get(FOUND), OP.i32Const, 1, OP.i32Add, ...set(FOUND),
  OP.end,
  ...get(J), OP.i32Const, 1, OP.i32Add, ...set(J),
  ...get(COUNT), OP.i32Const, 1, OP.i32Sub, ...tee(COUNT), OP.brIf, 0,
  OP.end,
  OP.end,
  ...get(FOUND),
  OP.end,
];
const code = (body: number[]) => {
  const bytes = [...vector([[4, I32], [1, F64], [1, V128]]), ...body];
  return [...uleb(bytes.length), ...bytes];
};
/** Shared linear memory imported as env.memory: limits flag 3 = has a maximum, shared; 1 to 65,536 pages (4 GiB). */
const SHARED_MEMORY_IMPORT = [...name('env'), ...name('memory'), 0x02, 0x03, ...uleb(1), ...uleb(65536)];
const MODULE_BYTES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, vector([[0x60, 7, I32, I32, I32, I32, I32, I32, F64, 1, I32]])),
  ...section(2, vector([SHARED_MEMORY_IMPORT])),
  ...section(3, vector([[0]])),
  ...section(7, vector([[...name('above'), 0x00, 0]])),
  ...section(10, [...uleb(1), ...code(body)]),
]);

// The few WebAssembly types used (the project's TypeScript libs do not declare the global).
export interface WasmMemory { readonly buffer: ArrayBufferLike; grow(pages: number): number }
interface WasmInstance { readonly exports: Record<string, unknown> }
type WasmModule = object;
const Wasm = (globalThis as unknown as {
  WebAssembly: {
    Module: new (bytes: Uint8Array) => WasmModule;
    Instance: new (module: WasmModule, imports: object) => WasmInstance;
    Memory: new (descriptor: { initial: number; maximum: number; shared: boolean }) => WasmMemory;
  };
}).WebAssembly;

let compiled: WasmModule | null | undefined;
/** The compiled kernel, or null where WebAssembly SIMD or shared memory is unavailable (the caller then keeps vec0). */
function kernelModule(): WasmModule | null {
  if (compiled === undefined) {
    try {
      compiled = new Wasm.Module(MODULE_BYTES);
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

/** Bytes in a WebAssembly page. */
export const PAGE_BYTES = 65536;

/**
 * A shared linear memory of `bytes` (rounded up to pages; fixed size: a store that outgrows it
 * is built again in a bigger one), or null where it cannot be had (no kernel, over 4 GiB, or
 * the allocation failed): the caller keeps vec0.
 */
export function sharedMemory(bytes: number): WasmMemory | null {
  if (!kernelModule()) return null;
  const pages = Math.max(1, Math.ceil(bytes / PAGE_BYTES));
  if (pages > 65536) return null;
  try {
    return new Wasm.Memory({ initial: pages, maximum: pages, shared: true });
  } catch {
    return null;
  }
}

/** Largest query magnitude for codes of `stride` (|code| ≤ 127): stride · 127 · limit < 2³¹. */
export const queryLimit = (stride: number) => Math.min(32767, Math.floor((2 ** 31 - 1) / (127 * stride)));

/** Bytes a code of `dimensions` takes: the kernel reads 16 at a time. */
export const strideFor = (dimensions: number) => Math.ceil(dimensions / 16) * 16;

/**
 * The kernel over one shared memory (each thread that scans it instantiates its own: an instance
 * is cheap, the memory is not copied).
 */
export class Int8Kernel {
  private readonly aboveScan: (query: number, code: number, count: number, stride: number, out: number, scales: number, threshold: number) => number;

  private constructor(readonly stride: number, module: WasmModule, memory: WasmMemory) {
    const { exports } = new Wasm.Instance(module, { env: { memory } });
    this.aboveScan = exports.above as Int8Kernel['aboveScan'];
  }

  /** A kernel scanning codes of `stride` bytes in `memory`, or null without WebAssembly SIMD. */
  static over(memory: WasmMemory, stride: number): Int8Kernel | null {
    const module = kernelModule();
    if (!module) return null;
    try {
      return new Int8Kernel(stride, module, memory);
    } catch {
      return null;
    }
  }

  /**
   * The codes among `count` from `codesAt` whose dot product with the int16 query at `queryAt`
   * times their scale (float32s from `scalesAt`) is above `threshold`: written from `outAt` as
   * 16-byte records (int32 position in the run, then at +8 the float64 score); returns how many.
   */
  above(queryAt: number, codesAt: number, count: number, scalesAt: number, threshold: number, outAt: number): number {
    return count > 0 ? this.aboveScan(queryAt, codesAt, count, this.stride, outAt, scalesAt, threshold) : 0;
  }
}
