// The write side of a consolidation run: applies the plan the pool computed, re-checking each
// item against the row as it is now — a memory recalled (last access moved), deleted (or held by
// a delete in progress), archived or promoted since planning is left alone — and counts only real changes. Runs inside the
// writer's group-commit transaction like any other command.
import type { Db } from '../../shared/db.js';
import type { ConsolidationPlan } from '../../shared/messages.js';
import type { ConsolidateResult } from '../../shared/schemas.js';
import { promotionWatermarkKey } from '../../shared/sql-schema.js';

/** Stores a promoted memory through the writer's usual de-duplicating path. */
export type StorePromoted = (promotion: ConsolidationPlan['promote'][number]) => { rowid: number; created: boolean };

export class ConsolidationWriter {
  private readonly s;

  constructor(db: Db, private readonly namespaceId: number) {
    this.s = {
      watermark: db.prepare(`INSERT INTO meta (key, value) VALUES (?, ?)
        ON CONFLICT(key) DO UPDATE SET value = excluded.value`),
      promotable: db.prepare<[string], { n: number }>(`SELECT count(*) AS n FROM memories
        WHERE rowid IN (SELECT value FROM json_each(?))
          AND memory_type = 'episodic' AND archived = 0 AND promoted_into IS NULL`),
      markPromoted: db.prepare('UPDATE memories SET promoted_into = ? WHERE rowid IN (SELECT value FROM json_each(?))'),
      decay: db.prepare(`UPDATE memories SET stability = @stability, difficulty = @difficulty,
          decayed_at = CASE WHEN @decayed THEN @at ELSE decayed_at END, archived = @archive
        WHERE rowid = @rowid AND archived = 0 AND last_access_at = @lastAccessAt`),
    };
  }

  /** `beingDeleted`: members an open delete holds are left alone, like deleted ones. */
  apply(plan: ConsolidationPlan, store: StorePromoted, beingDeleted: (members: number[]) => boolean = () => false): ConsolidateResult {
    const result: ConsolidateResult = { promoted: 0, decayed: 0, archived: 0 };
    for (const promotion of plan.promote) {
      const members = JSON.stringify(promotion.members);
      if (this.s.promotable.get(members)!.n !== promotion.members.length || beingDeleted(promotion.members)) continue;
      const stored = store(promotion);
      // Marked even when the entity already knew the fact: the provenance is recorded and the
      // members are never considered again, but only a new semantic memory counts as promoted.
      this.s.markPromoted.run(stored.rowid, members);
      if (stored.created) result.promoted++;
    }
    for (const item of plan.decay) {
      const changed = this.s.decay.run({
        rowid: item.rowid, lastAccessAt: item.lastAccessAt, stability: item.stability, difficulty: item.difficulty,
        decayed: item.decayed ? 1 : 0, archive: item.archive ? 1 : 0, at: plan.at,
      }).changes;
      if (changed === 0) continue;
      if (item.archive) result.archived++;
      else result.decayed++;
    }
    this.s.watermark.run(promotionWatermarkKey(this.namespaceId), String(plan.watermark));
    return result;
  }
}
