// GloVe 6B 100-d word vectors averaged with smooth inverse frequency weights (SIF, Arora et al.
// 2017): each known word weighs a / (a + p(w)), so "the" or "was" barely count and rare words
// carry the sentence. p(w) is estimated from the word's frequency rank in GloVe's vocabulary
// (Zipf: p ∝ 1 / rank), which the table keeps in order. Optionally the common component (the
// direction every SIF average leans towards, estimated once from the table itself) is removed.
// Microseconds per text, no model runtime; quality measured in bench/recall-quality.
import { embedNonEmpty, normalize, type Embedder } from './embedder.js';
import { loadGloveTable, type GloveTable } from './glove-table.js';
import { EMBEDDER_IDS, GLOVE_DEFAULTS, type GloveOptions } from '../../shared/embedder-identity.js';

/** GloVe 6B's vocabulary (400k words): Zipf's normaliser H(N) ≈ ln N + γ. */
const ZIPF_NORMALISER = Math.log(400_000) + 0.5772;
const wordProbability = (rank: number) => 1 / ((rank + 1) * ZIPF_NORMALISER);

export class GloveEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly weights: Float32Array;
  /** The common component removed from every vector, or null (unit length). */
  readonly common: Float32Array | null;

  constructor(private readonly table: GloveTable, options: GloveOptions = GLOVE_DEFAULTS) {
    this.id = EMBEDDER_IDS.glove(options);
    this.dimensions = table.dimensions;
    this.weights = new Float32Array(table.scales.length);
    for (let rank = 0; rank < this.weights.length; rank++) {
      const p = wordProbability(rank);
      // The int8 scale is folded into the weight: a row costs one multiply per value.
      this.weights[rank] = (options.a / (options.a + p)) * table.scales[rank];
    }
    this.common = options.removeCommon ? this.commonComponent() : null;
  }

  static async load(options: GloveOptions = GLOVE_DEFAULTS): Promise<GloveEmbedder> {
    return new GloveEmbedder(await loadGloveTable(options.words), options);
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return embedNonEmpty(texts, this.dimensions, async (nonEmpty) => nonEmpty.map((text) => this.embedOne(text)));
  }

  private embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    const words = text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    for (const word of words) {
      const rank = this.table.rank.get(word);
      if (rank !== undefined) this.addRow(vector, rank, this.weights[rank]);
    }
    if (this.common) {
      let dot = 0;
      for (let d = 0; d < this.dimensions; d++) dot += vector[d] * this.common[d];
      for (let d = 0; d < this.dimensions; d++) vector[d] -= dot * this.common[d];
    }
    // A text of unknown words only stays a zero vector, as a blank one does.
    return normalize(vector);
  }

  private addRow(vector: Float32Array, rank: number, weight: number): void {
    const offset = rank * this.dimensions;
    for (let d = 0; d < this.dimensions; d++) vector[d] += this.table.values[offset + d] * weight;
  }

  /** The expected SIF average of running text: every word weighted by its probability. */
  private commonComponent(): Float32Array {
    const mean = new Float32Array(this.dimensions);
    for (let rank = 0; rank < this.weights.length; rank++) this.addRow(mean, rank, wordProbability(rank) * this.weights[rank]);
    return normalize(mean);
  }
}
