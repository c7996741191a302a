// The write side of a consolidation run: applies the plan the pool computed, re-checking each
// item against the row as it is now — a memory recalled (last access moved), deleted (or held by
// a delete in progress), archived or promoted since planning is left alone — and counts only
// real changes. Promoted memories go through remember's de-duplicating path.
import type { CommandOf, ConsolidationPlan, WriterResults } from '../../shared/protocol/writer.js';
import type { ConsolidateResult } from '../../shared/schemas.js';
import { promotionWatermarkKey } from '../../shared/sql-schema.js';
import type { Step } from './rows.js';
import type { RuleContext } from './context.js';
import { storeOwned } from './remember.js';

export function* consolidate(cmd: CommandOf<'consolidate'>, ctx: RuleContext): Step<WriterResults['consolidate']> {
  return yield* applyPlan(ctx, cmd.plan, (p) => storeOwned(ctx, p.ownerId, {
    type: 'semantic', content: p.content, confidence: p.confidence, tier: 1,
    ownerId: p.ownerId, episodeId: p.episodeId, seq: null, role: null, links: [],
  }));
}

/** Stores a promoted memory (the command: through remember's de-duplicating path). */
export type StorePromoted = (promotion: ConsolidationPlan['promote'][number]) => Step<{ rowid: number; created: boolean }>;

export function* applyPlan(ctx: RuleContext, plan: ConsolidationPlan, store: StorePromoted): Step<ConsolidateResult> {
  const result: ConsolidateResult = { promoted: 0, decayed: 0, archived: 0 };
  for (const p of plan.promote) {
    if ((yield* ctx.rows.countPromotable(p.members)) !== p.members.length) continue;
    // A promotion from episodic rows an open delete holds would outlive the delete (as extraction would).
    if (yield* ctx.deletes.anyRowHeld(ctx.rows, p.members)) continue;
    const stored = yield* store(p);
    // Marked even when the entity already knew the fact: the provenance is recorded and the
    // members are never considered again, but only a new semantic memory counts as promoted.
    yield* ctx.rows.markPromoted(p.members, stored.rowid);
    if (stored.created) result.promoted++;
  }
  for (const item of plan.decay) {
    const changed = yield* ctx.rows.decay({
      rowid: item.rowid, lastAccessAt: item.lastAccessAt, stability: item.stability, difficulty: item.difficulty,
      decayed: item.decayed, archive: item.archive, at: plan.at,
    });
    if (!changed) continue;
    if (item.archive) result.archived++;
    else result.decayed++;
  }
  yield* ctx.rows.setMeta(promotionWatermarkKey(ctx.namespaceId), String(plan.watermark));
  return result;
}
