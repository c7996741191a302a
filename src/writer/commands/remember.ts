// remember: a fact about an entity (created on first use). A fact the entity already holds
// (same normalised content) raises that memory's confidence instead of adding a row — which is
// also what makes a retry after an unknown COMMIT outcome safe.
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import { contentKey } from '../../shared/text.js';
import type { MemoryRow, Step } from './rows.js';
import type { RuleContext } from './context.js';
import { entity } from './entities.js';
import { insertMemory, type NewMemory } from './new-memory.js';

export function* remember(cmd: CommandOf<'remember'>, ctx: RuleContext): Step<WriterResults['remember']> {
  const owner = yield* entity(ctx, cmd.entity);
  const row = yield* storeOwned(ctx, owner.id, {
    type: 'semantic', content: cmd.fact, confidence: cmd.confidence, tier: 1,
    ownerId: owner.id, episodeId: null, seq: null, role: null, links: [],
  });
  return {
    id: row.id, content: row.content, memory_type: row.memory_type,
    confidence: row.confidence, stability: row.stability, extraction_tier: row.extraction_tier,
  };
}

/** Stores a memory owned by an entity unless the entity already holds the same fact. */
export function* storeOwned(ctx: RuleContext, ownerId: string, memory: NewMemory): Step<MemoryRow & { created: boolean }> {
  // A row an open delete is about to remove is no duplicate: the new fact gets a row of its own.
  const duplicate = yield* ctx.rows.ownedDuplicate(ownerId, contentKey(memory.content), memory.type, ctx.deletes.deletedUpTo(ownerId));
  if (duplicate) {
    // Hearing a fact again is evidence for it: keep the stronger confidence.
    yield* ctx.rows.raiseConfidence(duplicate.rowid, memory.confidence, ctx.now());
    return { ...duplicate, confidence: Math.max(duplicate.confidence, memory.confidence), created: false };
  }
  const links = [{ entityId: ownerId, relation: 'owner' as const }, ...memory.links];
  return { ...(yield* insertMemory(ctx, { ...memory, links })), created: true };
}
