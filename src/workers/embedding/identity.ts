// What an embedder will call itself, known from configuration alone: the writer records it
// beside the vectors without loading any model. Each embedder class reports the same id.
//
// `minSimilarity` is the embedder's calibration: the cosine similarity from which a vector
// match counts on its own (below it, only when another signal agrees — see vector-signal.ts).
// It differs per model: USE-lite scores unrelated short sentences up to ~0.45, the hashing
// embedder near 0. Measured with bench/recall-quality.
import type { Config } from '../../shared/config.js';

export interface EmbedderIdentity {
  id: string;
  dimensions: number;
  minSimilarity: number;
}

/** The ids embedders record with their vectors; each embedder class reports the same. */
export const EMBEDDER_IDS = {
  use: 'use-lite-512',
  hash: (dimensions: number) => `hash-${dimensions}`,
  openai: (model: string) => `openai:${model}`,
} as const;

export function embedderIdentity(config: Pick<Config, 'embedder'>): EmbedderIdentity {
  const e = config.embedder;
  switch (e.kind) {
    case 'use':
      return { id: EMBEDDER_IDS.use, dimensions: 512, minSimilarity: 0.45 };
    case 'hash':
      return { id: EMBEDDER_IDS.hash(e.dimensions), dimensions: e.dimensions, minSimilarity: 0.2 };
    case 'openai':
      return { id: EMBEDDER_IDS.openai(e.model), dimensions: e.dimensions, minSimilarity: 0.3 };
  }
}
