// Retrieval scores shared by the quality benches: evidence recall@k (the share of a question's
// evidence items found in the top k, averaged over questions) and MRR (1 / rank of the first).

export const KS = [1, 5, 10] as const;

export interface Scores {
  recall: Record<number, number>;
  mrr: number;
  questions: number;
}

/** `ranked` and `evidence` are keyed alike; a question missing from `ranked` counts as a miss. */
export function scoreRankings(ranked: Map<string, string[]>, evidence: Map<string, Set<string>>): Scores {
  const recall: Record<number, number> = Object.fromEntries(KS.map((k) => [k, 0]));
  let mrr = 0;
  for (const [question, wanted] of evidence) {
    const ids = ranked.get(question) ?? [];
    for (const k of KS) recall[k] += ids.slice(0, k).filter((id) => wanted.has(id)).length / wanted.size;
    const first = ids.findIndex((id) => wanted.has(id));
    if (first >= 0) mrr += 1 / (first + 1);
  }
  const n = Math.max(1, evidence.size);
  for (const k of KS) recall[k] /= n;
  return { recall, mrr: mrr / n, questions: evidence.size };
}

export const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);

export function scoreLine(name: string, s: Scores, width = 34): string {
  return `${name.padEnd(width)}${KS.map((k) => pct(s.recall[k])).join('')}  ${s.mrr.toFixed(3)}`;
}

export function scoreHeader(title: string, width = 34): string {
  return `${title.padEnd(width)}${KS.map((k) => `R@${k}`.padStart(7)).join('')}    MRR`;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
