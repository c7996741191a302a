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

/** R@10 and multi-hop (category 1) R@10 of each setting in each conversation (question keys are `<conversation>#…`). */
export function perConversationTable(names: string[], ranked: Map<string, string[]>[], evidence: Map<string, Set<string>>,
  category: Map<string, number>, conversations: string[], width: number): string {
  const p = (x: number) => (x * 100).toFixed(1).padStart(5);
  const lines = [`\nper conversation: R@10 / multi-hop R@10 (${conversations.join(', ')})`];
  names.forEach((name, s) => {
    const cells = conversations.map((id) => {
      const mine = new Map([...evidence].filter(([q]) => q.startsWith(`${id}#`)));
      const multi = new Map([...mine].filter(([q]) => category.get(q) === 1));
      return `${p(scoreRankings(ranked[s], mine).recall[10])}/${p(scoreRankings(ranked[s], multi).recall[10]).trim()}`;
    });
    lines.push(`${name.padEnd(width)} ${cells.join(' ')}`);
  });
  return lines.join('\n');
}
