// The write side of a consolidation run on PostgreSQL (twin of ../consolidation.ts): applies the
// pool's plan, re-checking each item against the row as it is now, and counts only real changes.
import type { ConsolidationPlan } from '../../shared/protocol/writer.js';
import type { ConsolidateResult } from '../../shared/schemas.js';
import { promotionWatermarkKey } from '../../shared/sql-schema.js';
import type { Tx } from './connect.js';

export type StorePromoted = (promotion: ConsolidationPlan['promote'][number]) => Promise<{ rowid: number; created: boolean }>;

export async function applyConsolidation(
  tx: Tx, namespaceId: number, plan: ConsolidationPlan, store: StorePromoted, beingDeleted: (members: number[]) => Promise<boolean>,
): Promise<ConsolidateResult> {
  const result: ConsolidateResult = { promoted: 0, decayed: 0, archived: 0 };
  for (const promotion of plan.promote) {
    const [promotable] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM memories WHERE rowid = ANY(${promotion.members}::bigint[])
      AND memory_type = 'episodic' AND archived = 0 AND promoted_into IS NULL`;
    if (promotable!.n !== promotion.members.length || await beingDeleted(promotion.members)) continue;
    const stored = await store(promotion);
    // Marked even when the entity already knew the fact (provenance); only a new memory counts.
    await tx`UPDATE memories SET promoted_into = ${stored.rowid} WHERE rowid = ANY(${promotion.members}::bigint[])`;
    if (stored.created) result.promoted++;
  }
  for (const item of plan.decay) {
    const changed = await tx`UPDATE memories SET stability = ${item.stability}, difficulty = ${item.difficulty},
        decayed_at = CASE WHEN ${item.decayed} THEN ${plan.at}::bigint ELSE decayed_at END, archived = ${item.archive ? 1 : 0}
      WHERE rowid = ${item.rowid} AND archived = 0 AND last_access_at = ${item.lastAccessAt}`;
    if (changed.count === 0) continue;
    if (item.archive) result.archived++;
    else result.decayed++;
  }
  await tx`INSERT INTO meta (key, value) VALUES (${promotionWatermarkKey(namespaceId)}, ${String(plan.watermark)})
    ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
  return result;
}
