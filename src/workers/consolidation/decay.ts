// Decay and archiving (the rule is documented in README "Consolidation"):
//   - retrievability R = (1 + t/(9·S))⁻¹, t = days since the memory's last access (recall);
//   - a memory left unrecalled for longer than its stability S since its last access or its
//     last decay step is treated as an FSRS lapse: S and difficulty take FSRS's post-lapse
//     values (lower S, higher D). Counted in `decayed`; at most one step per S interval;
//   - a memory whose R (after this run's step) is below the archive threshold is archived.
//     Counted in `archived` only.
// SQL selects just the rows a run can change, so a large healthy store costs one index scan.
import type { Db } from '../../shared/db.js';
import { DAY_MS, lapsedDifficulty, lapsedStability, retrievability } from '../../shared/fsrs.js';
import type { ConsolidationPlan } from '../../shared/messages.js';

interface DecayRow {
  rowid: number;
  stability: number;
  difficulty: number;
  last_access_at: number;
  decayed_at: number | null;
}

export class DecayPlanner {
  private readonly candidates;

  constructor(db: Db, private readonly namespaceId: number, private readonly archiveBelow: number) {
    // R < θ  ⇔  t > 9·S·(1/θ − 1): rows already below the threshold need no decay step to qualify.
    this.candidates = db.prepare<Record<string, number>, DecayRow>(`
      SELECT rowid, stability, difficulty, last_access_at, decayed_at FROM memories
      WHERE namespace_id = @ns AND archived = 0 AND (
        @now - max(last_access_at, coalesce(decayed_at, 0)) > stability * ${DAY_MS}
        OR @now - last_access_at > stability * @archiveFactor * ${DAY_MS})`);
  }

  plan(now: number): ConsolidationPlan['decay'] {
    const archiveFactor = 9 * (1 / Math.max(this.archiveBelow, 1e-9) - 1);
    const items: ConsolidationPlan['decay'] = [];
    for (const row of this.candidates.iterate({ ns: this.namespaceId, now, archiveFactor })) {
      const elapsed = now - row.last_access_at;
      const due = now - Math.max(row.last_access_at, row.decayed_at ?? 0) > row.stability * DAY_MS;
      const stability = due ? lapsedStability(row.stability, row.difficulty, retrievability(row.stability, elapsed)) : row.stability;
      const difficulty = due ? lapsedDifficulty(row.difficulty) : row.difficulty;
      const decayed = stability !== row.stability || difficulty !== row.difficulty;
      const archive = retrievability(stability, elapsed) < this.archiveBelow;
      if (decayed || archive) items.push({ rowid: row.rowid, lastAccessAt: row.last_access_at, stability, difficulty, decayed, archive });
    }
    return items;
  }
}
