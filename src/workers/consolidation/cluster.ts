// Clusters of near-duplicate statements. Leader clustering: each statement joins the most
// similar existing cluster whose first member (its leader) it repeats, else starts a new one.
// Comparing with the leader only (not any member) keeps clusters from drifting by chains of
// small steps. Deterministic for a given input order.

export interface Statement {
  rowid: number;
  content: string;
  /** Normalised content (contentKey): equal keys are repeats even without vectors. */
  key: string;
  /** Unit-length embedding, or null when none is available. */
  vector: Float32Array | null;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot;
}

const NUMBER = /\d+(?:[.,:]\d+)*/g;
const NEGATION = /\b(?:not|no|never|don't|doesn't|didn't|isn't|aren't|wasn't|can't|cannot|won't|no longer)\b/i;

/**
 * Embeddings score "I have 2 cats" and "I have 3 cats", or "I like X" and "I don't like X",
 * as near-identical. Repeats must agree on numbers and on negation.
 */
export function compatible(a: Statement, b: Statement): boolean {
  const numbers = (s: Statement) => (s.content.match(NUMBER) ?? []).sort().join(' ');
  return numbers(a) === numbers(b) && NEGATION.test(a.content) === NEGATION.test(b.content);
}

function similarity(a: Statement, b: Statement): number {
  if (a.key === b.key) return 1;
  if (!a.vector || !b.vector || !compatible(a, b)) return 0;
  return cosine(a.vector, b.vector);
}

/** Clusters of at least `minSize` statements whose similarity to their leader is ≥ threshold. */
export function clusterRepeats(statements: Statement[], threshold: number, minSize = 2): Statement[][] {
  const clusters: Statement[][] = [];
  for (const statement of statements) {
    let best: Statement[] | null = null;
    let bestScore = threshold;
    for (const cluster of clusters) {
      const score = similarity(statement, cluster[0]);
      if (score >= bestScore && (best === null || score > bestScore)) {
        best = cluster;
        bestScore = score;
      }
    }
    if (best) best.push(statement);
    else clusters.push([statement]);
  }
  return clusters.filter((cluster) => cluster.length >= minSize);
}

/** The member most similar to all the others (the medoid); the earliest on ties. */
export function representative(cluster: Statement[]): Statement {
  let best = cluster[0];
  let bestTotal = -Infinity;
  for (const candidate of cluster) {
    let total = 0;
    for (const other of cluster) if (other !== candidate) total += similarity(candidate, other);
    if (total > bestTotal) {
      best = candidate;
      bestTotal = total;
    }
  }
  return best;
}
