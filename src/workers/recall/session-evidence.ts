// Session-level evidence (hierarchical retrieval). A conversation session is a document too:
// the session where several turns match the question is more likely to hold the answer than
// one where a single turn happens to share a word, and the answer's own turn is often a weak
// match ("Lisbon, finally!") beside strong ones. So each episode is scored as a whole — the sum
// of its best few candidate turns' fused scores — and every candidate turn gains a fraction of
// its episode's score, relative to the best episode's. A memory outside any episode (a fact,
// distilled from a session) stands for a session whose best turns are all as good as it: so in a
// recall of every type a fact is not pushed below the turns of a talkative session, and among
// facts alone the stage is a monotone lift that changes no order.
import type { CandidateRow } from '../port/candidates.js';

/** An episode's score is the sum of its best this-many turns (a session is judged by its best evidence, not its length). */
export const SESSION_TOP_TURNS = 3;

/** The bonus each candidate gains: weight × its session's score ÷ the best session's (0 for all when weight is 0). */
export function sessionEvidence(rows: Map<number, CandidateRow>, scores: Map<number, number>, weight: number,
  topTurns = SESSION_TOP_TURNS): Map<number, number> {
  const bonus = new Map<number, number>();
  if (weight <= 0 || scores.size === 0) return bonus;
  const groupOf = (rowid: number) => {
    const row = rows.get(rowid);
    return row?.memory_type === 'episodic' && row.episode_id !== null ? `e${row.episode_id}` : `m${rowid}`;
  };
  const byGroup = new Map<string, number[]>();
  for (const [rowid, score] of scores) {
    const group = groupOf(rowid);
    const list = byGroup.get(group);
    if (list) list.push(score);
    else byGroup.set(group, [score]);
  }
  const groupScore = new Map<string, number>();
  let best = 0;
  for (const [group, list] of byGroup) {
    const sum = group.startsWith('m') ? topTurns * list[0] : list.sort((a, b) => b - a).slice(0, topTurns).reduce((a, b) => a + b, 0);
    groupScore.set(group, sum);
    best = Math.max(best, sum);
  }
  if (best <= 0) return bonus;
  for (const rowid of scores.keys()) bonus.set(rowid, weight * groupScore.get(groupOf(rowid))! / best);
  return bonus;
}
