// Score fusion. Every candidate is scored on every signal that knows it; each signal's raw
// scores (bm25, cosine) are normalised to [0, 1] over the candidates it scored, and the fused
// score is the weighted mean over the signals that know the memory. So a memory whose vector
// is not computed yet is ranked by its lexical score alone — not pushed below memories that
// merely have a vector, as rank fusion did (mere presence in a list was a bonus there).
//
// Why scores rather than ranks: with reciprocal-rank fusion a noisy signal's rank 1 is worth
// dozens of ranks of a good one, and a flat list (all candidates nearly equally similar)
// reorders a sharp one. Normalised scores keep each signal's confidence: a flat signal moves
// little, a sharp one a lot.

export interface SignalScores {
  weight: number;
  /** Raw scores, higher is better, for exactly the memories this signal knows. */
  scores: Map<number, number>;
  /**
   * 'ratio': score / best (scores are ≥ 0 and 0 means "no evidence", as for bm25).
   * 'range': min-max over the known memories (cosine: there is no natural zero).
   */
  scale: 'ratio' | 'range';
}

/** The signal's scores mapped to [0, 1]. */
export function normalised(signal: SignalScores): Map<number, number> {
  if (signal.scores.size === 0) return new Map();
  // A loop, not Math.max(...spread): a spread of 100k+ candidates overflows the stack.
  let max = -Infinity;
  let lowest = Infinity;
  for (const score of signal.scores.values()) {
    max = Math.max(max, score);
    lowest = Math.min(lowest, score);
  }
  const min = signal.scale === 'ratio' ? 0 : lowest;
  const span = max - min;
  return new Map([...signal.scores].map(([rowid, score]) => [rowid, span > 0 ? (score - min) / span : 1]));
}

/**
 * Weighted mean of the normalised scores of the signals that know each memory. A memory no
 * signal knows scores 0. Signals with no scores at all (nothing to say) are left out.
 */
export function fuseScores(rowids: Iterable<number>, signals: SignalScores[]): Map<number, number> {
  const known = signals.filter((s) => s.weight > 0 && s.scores.size > 0).map((s) => ({ weight: s.weight, scores: normalised(s) }));
  const fused = new Map<number, number>();
  for (const rowid of rowids) {
    let sum = 0;
    let weights = 0;
    for (const signal of known) {
      const score = signal.scores.get(rowid);
      if (score === undefined) continue;
      sum += signal.weight * score;
      weights += signal.weight;
    }
    fused.set(rowid, weights > 0 ? sum / weights : 0);
  }
  return fused;
}
