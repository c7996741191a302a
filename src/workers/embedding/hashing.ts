// A fast deterministic embedder for tests and scale benchmarks: signed feature hashing of
// word unigrams, word bigrams and character trigrams. No semantics beyond shared surface
// forms, but stable, dependency-free and ~100× faster than a neural model.
import { embedNonEmpty, normalize, type Embedder } from './embedder.js';
import { EMBEDDER_IDS } from '../../shared/embedder-identity.js';

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export class HashingEmbedder implements Embedder {
  readonly id: string;

  constructor(readonly dimensions = 256) {
    this.id = EMBEDDER_IDS.hash(dimensions);
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return embedNonEmpty(texts, this.dimensions, async (nonEmpty) => nonEmpty.map((text) => this.embedOne(text)));
  }

  private embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    const add = (feature: string, weight: number) => {
      const hash = fnv1a(feature);
      vector[hash % this.dimensions] += hash & 0x80000000 ? -weight : weight;
    };
    const words = text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    words.forEach((word, i) => {
      add(`w:${word}`, 1);
      if (i > 0) add(`b:${words[i - 1]} ${word}`, 0.5);
      const padded = ` ${word} `;
      for (let j = 0; j + 3 <= padded.length; j++) add(`c:${padded.slice(j, j + 3)}`, 0.3);
    });
    return normalize(vector);
  }
}
