// Questions about several people or things ("what have Ann and Bo both painted?"): one probe
// per part. Each entity the question names is a part; its probe is the ranking restricted to
// the candidates by or about it (who-said-it.ts). The answer takes the parts' best in turn —
// each part's first, then each part's second, … — so the top results cover every part, instead
// of ten of the part that happens to match best. The candidates of no part are a part of their
// own, so a strong unlinked memory is not pushed below every part's weak ones.

/** The ranked rowids reordered to cover the parts in turn (unchanged with fewer than two parts). */
export function coveringParts(ranked: number[], parts: ReadonlySet<number>[]): number[] {
  const nonEmpty = parts.filter((part) => ranked.some((rowid) => part.has(rowid)));
  if (nonEmpty.length < 2) return ranked;
  const turn = new Map<number, number>();
  const taken = nonEmpty.map(() => 0);
  let unlinked = 0;
  for (const rowid of ranked) {
    // A memory of several parts counts at its best turn among them, and uses up a place in each.
    let best = Infinity;
    for (const [p, part] of nonEmpty.entries()) if (part.has(rowid)) best = Math.min(best, taken[p]);
    if (best === Infinity) {
      turn.set(rowid, unlinked++);
      continue;
    }
    for (const [p, part] of nonEmpty.entries()) if (part.has(rowid)) taken[p]++;
    turn.set(rowid, best);
  }
  // Stable: within a turn, the original order (score) decides.
  return ranked.map((rowid, index) => ({ rowid, index })).sort((a, b) => turn.get(a.rowid)! - turn.get(b.rowid)! || a.index - b.index).map((r) => r.rowid);
}
