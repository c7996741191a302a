// Weighted reciprocal-rank fusion: score(d) = Σ_s w_s / (K + rank_s(d)), rank from 1.
// Signals that returned nothing carry no information for this query and are left out, so
// they neither dilute nor reorder the others.

export const RRF_K = 60;

export interface RankedList {
  weight: number;
  rowids: number[];
}

/** Row ids with their fused scores, best first (ties broken by row id, newest first). */
export function fuseRankings(lists: RankedList[]): { rowid: number; score: number }[] {
  const scores = new Map<number, number>();
  for (const list of lists) {
    if (list.rowids.length === 0 || list.weight <= 0) continue;
    list.rowids.forEach((rowid, index) => {
      scores.set(rowid, (scores.get(rowid) ?? 0) + list.weight / (RRF_K + index + 1));
    });
  }
  return [...scores.entries()]
    .map(([rowid, score]) => ({ rowid, score }))
    .sort((a, b) => b.score - a.score || b.rowid - a.rowid);
}
