// What an embedder will call itself, known from configuration alone: the writer records it
// beside the vectors without loading any model. Each embedder class reports the same id.
//
// `minSimilarity` is the embedder's calibration: the cosine similarity from which a vector
// match counts on its own (below it, only when another signal agrees — see workers/sqlite/vectors.ts).
// It differs per model: USE-lite scores unrelated short sentences up to ~0.45, GloVe SIF averages
// up to ~0.88 (the 90th percentile of question/other-turn pairs on LoCoMo dev for both), the hashing
// embedder near 0. Measured with bench/recall-quality.
import type { Config } from './config.js';

export interface EmbedderIdentity {
  id: string;
  dimensions: number;
  minSimilarity: number;
}

/** GloVe SIF averaging (glove.ts); every option changes the vectors, so each is in the id. */
export interface GloveOptions {
  /** How many of the most frequent words the table keeps. */
  words: number;
  /** SIF smoothing a: a word weighs a / (a + p(w)); smaller weighs frequent words down harder. */
  a: number;
  /** Remove the common component from every vector. */
  removeCommon: boolean;
}

export const GLOVE_DEFAULTS: GloveOptions = { words: 50_000, a: 1e-3, removeCommon: false };

/** USE-lite distilled to a static token table (use-static.ts): SIF smoothing, common component. */
export interface UseStaticOptions {
  a: number;
  removeCommon: boolean;
}

export const USE_STATIC_DEFAULTS: UseStaticOptions = { a: 1e-4, removeCommon: false };

/** Calibrated like the others (see the top of this file): bench/recall-quality/calibrate.ts on LoCoMo dev: p90 0.896 (USE-lite: 0.417, configured 0.45). */
const USE_STATIC_MIN_SIMILARITY = 0.9;

/** The ids embedders record with their vectors; each embedder class reports the same. */
export const EMBEDDER_IDS = {
  use: 'use-lite-512',
  glove: (o: GloveOptions) => `glove-6b-100d-${o.words / 1000}k-sif${o.a}${o.removeCommon ? '-pc' : ''}`,
  useStatic: (o: UseStaticOptions) => `use-lite-static-a${o.a}${o.removeCommon ? '-common' : ''}`,
  hash: (dimensions: number) => `hash-${dimensions}`,
  openai: (model: string) => `openai:${model}`,
} as const;

export function embedderIdentity(config: Pick<Config, 'embedder'>): EmbedderIdentity {
  const e = config.embedder;
  switch (e.kind) {
    case 'use':
      return { id: EMBEDDER_IDS.use, dimensions: 512, minSimilarity: 0.45 };
    case 'glove':
      return { id: EMBEDDER_IDS.glove(GLOVE_DEFAULTS), dimensions: 100, minSimilarity: 0.88 };
    case 'use-static':
      return { id: EMBEDDER_IDS.useStatic(USE_STATIC_DEFAULTS), dimensions: 512, minSimilarity: USE_STATIC_MIN_SIMILARITY };
    case 'hash':
      return { id: EMBEDDER_IDS.hash(e.dimensions), dimensions: e.dimensions, minSimilarity: 0.2 };
    case 'openai':
      return { id: EMBEDDER_IDS.openai(e.model), dimensions: e.dimensions, minSimilarity: 0.3 };
  }
}
