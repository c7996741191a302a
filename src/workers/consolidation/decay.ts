// Decay and archiving (the rule is documented in README "Consolidation"):
//   - retrievability R = (1 + t/(9·S))⁻¹, t = days since the memory's last access (recall);
//   - a memory left unrecalled for longer than its stability S since its last access or its
//     last decay step is treated as an FSRS lapse: S and difficulty take FSRS's post-lapse
//     values (lower S, higher D). Counted in `decayed`; at most one step per S interval;
//   - a memory whose R (after this run's step) is below the archive threshold is archived.
//     Counted in `archived` only.
// The port selects just the rows a run can change, so a large healthy store costs one index scan.
import { DAY_MS, lapsedDifficulty, lapsedStability, retrievability } from '../../shared/fsrs.js';
import type { ConsolidationPlan } from '../../shared/protocol/writer.js';
import type { ReadPort } from '../port/read-port.js';

/** The read decay needs (the read port's). */
export type DecayReads = Pick<ReadPort, 'decayCandidates'>;

export class DecayPlanner {
  constructor(private readonly reads: DecayReads, private readonly archiveBelow: number) {}

  async plan(now: number): Promise<ConsolidationPlan['decay']> {
    const archiveFactor = 9 * (1 / Math.max(this.archiveBelow, 1e-9) - 1);
    const items: ConsolidationPlan['decay'] = [];
    // R < θ  ⇔  t > 9·S·(1/θ − 1): rows already below the threshold need no decay step to qualify.
    for (const row of await this.reads.decayCandidates(now, archiveFactor)) {
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
