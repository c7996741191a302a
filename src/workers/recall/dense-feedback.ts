// Dense pseudo-relevance feedback (Rocchio on embeddings): the best few results of a first
// ranking say more about what the question is after than its own few words, so a second vector
// probe is sent with the query vector moved towards theirs — turns that resemble the answers
// found so far are found too, even when they share no word with the question.

/** normalise(query + beta × mean of the unit-length feedback vectors); the query itself when there are none. */
export function feedbackVector(query: Float32Array, feedback: Float32Array[], beta: number): Float32Array {
  if (feedback.length === 0 || beta <= 0) return query;
  const moved = Float32Array.from(query);
  for (const vector of feedback) {
    const length = norm(vector);
    const scale = length > 0 ? beta / (feedback.length * length) : 0;
    for (let i = 0; i < moved.length; i++) moved[i] += scale * (vector[i] ?? 0);
  }
  const length = norm(moved);
  if (length === 0) return query;
  for (let i = 0; i < moved.length; i++) moved[i] /= length;
  return moved;
}

export function norm(vector: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  return Math.sqrt(sum);
}
