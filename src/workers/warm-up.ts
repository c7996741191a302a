// A pool thread's warm-up, run before the service listens (ReadPool.warmUp). Measured with
// bench/cold-start: a fresh thread's first recalls are many times slower than its later ones,
// because the embedder is still loading, tfjs runs its kernels in V8's interpreter until they
// are hot, and the recall's SQL and ranking code has not been compiled either. A few embeddings
// and recall-shaped reads here move that cost before the first client, instead of into its p99.
import { threadId } from 'node:worker_threads';
import type { Embedder } from './embedding/embedder.js';
import type { RecallEngine } from './recall/engine.js';
import type { PoolResults } from '../shared/protocol/pool.js';

/**
 * Questions of the lengths clients send: tfjs runs the model per input length, so several
 * lengths warm more of the kernels' paths than one sentence repeated.
 */
const QUESTIONS = [
  'coffee',
  'where does she live?',
  'what did we decide about the launch date',
  'which restaurants did Maria recommend when we talked about the trip to Lisbon last spring?',
  'preferences',
  'who is working on the billing migration and what is blocking it right now',
  'favourite books',
  'when is the next team meeting and who is presenting',
];

/** Rounds over QUESTIONS: 32 embeddings, after which one costs within ~1.2× of a warm one (docs/recall-at-scale.md). */
export const WARM_UP_ROUNDS = 4;

export type WarmUpReport = PoolResults['warmUp'];

export interface WarmUpParts {
  /** Embed the questions: not when the embedder is an endpoint (a paid network call at every start, and a start that fails while it is down). */
  embed: boolean;
  /** Recall with them on this engine, or null (PostgreSQL: see worker.ts). */
  recall: RecallEngine | null;
}

/**
 * Embeds the questions and recalls with them, as `parts` says. A failure only ends the warm-up
 * early: the first recalls then pay what warming would have, nothing else.
 */
export async function warmUp(embedder: Promise<Embedder>, parts: WarmUpParts, rounds = WARM_UP_ROUNDS): Promise<WarmUpReport> {
  const started = performance.now();
  let embedded = 0;
  let recalled = 0;
  try {
    const model = parts.embed ? await embedder : null;
    for (let round = 0; round < rounds && (model || parts.recall); round++) {
      for (const query of QUESTIONS) {
        const [vector] = model ? await model.embed([query]) : [null];
        if (model) embedded++;
        if (!parts.recall) continue;
        await parts.recall.recall({ query, entity: null, types: null, limit: 5, explain: false, queryVector: vector ?? null });
        recalled++;
      }
    }
  } catch {
    // Recall reports the same failure to its callers when they ask.
  }
  return { threadId, ms: performance.now() - started, embedded, recalled };
}
