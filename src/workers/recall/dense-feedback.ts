// Dense pseudo-relevance feedback (Rocchio on embeddings). The best few candidates of the first
// fusion say more about what a question is after than its own few words: the query vector is
// moved part of the way towards theirs, and every candidate's cosine to the moved query becomes
// one more signal of the weighted mean (engine.ts). A candidate that resembles what was found
// so far — the same person's other hobby, the paraphrase of the fact the question asks for —
// gains, though it shares no word with the question. Measured in docs/recall-quality.md.

/** How many of the first fusion's best candidates the query moves towards. */
export const FEEDBACK_DOCS = 5;

/**
 * normalise(query + shift × mean of the unit-length feedback vectors); the query itself when
 * there are none. A zero-length vector has no direction: it is left out of the mean, divisor included.
 */
export function feedbackVector(query: Float32Array, feedback: Float32Array[], shift: number): Float32Array {
  if (shift <= 0) return query;
  const usable: { vector: Float32Array; length: number }[] = [];
  for (const vector of feedback) {
    const length = norm(vector);
    if (length > 0) usable.push({ vector, length });
  }
  if (usable.length === 0) return query;
  const moved = Float32Array.from(query);
  for (const { vector, length } of usable) {
    const scale = shift / (usable.length * length);
    for (let i = 0; i < moved.length; i++) moved[i] += scale * (vector[i] ?? 0);
  }
  const length = norm(moved);
  if (length === 0) return query;
  for (let i = 0; i < moved.length; i++) moved[i] /= length;
  return moved;
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  return Math.sqrt(sum);
}
