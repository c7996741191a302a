// Deleting an entity, in four commands: forgetBegin holds the entity's rows up to the current
// rowid (they count as gone from then on), forgetRows removes listed rows a chunk at a time,
// forgetEntity removes the entity itself once none of its memories is left, forgetEnd releases
// the hold. The rows' snapshot is taken before the first chunk (a file, fsynced) or, on
// PostgreSQL, by the chunk that removes them (tables, same transaction); the entity's record
// and episode participations are in the snapshot's header either way, so restore brings it back.
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import type { MemoryType } from '../../shared/schemas.js';
import type { Step } from './rows.js';
import type { RuleContext } from './context.js';

/**
 * Time one forgetRows command may run before handing the writer back to other writes: a huge
 * entity is deleted over many commands, other batches commit between.
 */
export const CHUNK_BUDGET_MS = 40;

/** Opens a delete; its snapshot holds rows up to `maxRowid`. */
export function* forgetBegin(cmd: CommandOf<'forgetBegin'>, ctx: RuleContext): Step<WriterResults['forgetBegin']> {
  // Row ids only grow (and on PostgreSQL follow commit order, the namespace lock): every memory
  // written from now on is above maxRowid.
  const maxRowid = yield* ctx.rows.maxRowid();
  const entity = yield* ctx.rows.entityByName(cmd.entity);
  if (entity) ctx.deletes.begin(cmd.deletionId, { entityId: entity.id, maxRowid });
  return { maxRowid };
}

export function* forgetEnd(cmd: CommandOf<'forgetEnd'>, ctx: RuleContext): Step<WriterResults['forgetEnd']> {
  ctx.deletes.end(cmd.deletionId);
  return { status: 'ok' };
}

/**
 * Forget means forget: once the delete's rows are gone, the entity leaves the entity list, inspect
 * (404) and the stats count too — unless a memory of it was written while the delete ran (kept, as
 * if written just after; the entity stays with it). Mention links from other entities' memories
 * go with it: they name an entity that no longer exists (restore does not bring them back).
 */
export function* forgetEntity(cmd: CommandOf<'forgetEntity'>, ctx: RuleContext): Step<WriterResults['forgetEntity']> {
  const hold = ctx.deletes.held(cmd.deletionId);
  if (!hold) return { removed: false };
  if (yield* ctx.rows.entityHasMemories(hold.entityId)) return { removed: false };
  return { removed: yield* ctx.rows.removeEntity(hold.entityId) };
}

/** Removes listed rows for at most CHUNK_BUDGET_MS; rows already gone are skipped. */
export function* forgetRows(cmd: CommandOf<'forgetRows'>, ctx: RuleContext): Step<WriterResults['forgetRows']> {
  const started = performance.now();
  let processed = 0;
  let removed = 0;
  const copied: Record<MemoryType, number> = { episodic: 0, semantic: 0, procedural: 0 };
  while (processed < cmd.rows.length && (processed === 0 || performance.now() - started <= CHUNK_BUDGET_MS)) {
    const round = cmd.rows.slice(processed, processed + ctx.rows.removeRound);
    processed += round.length;
    const gone = yield* ctx.rows.removeMemories(round, cmd.snapshot);
    // The turn after a forgotten one must not keep its text as context (see migration 6).
    const turns = gone.flatMap((g) => (g.episode_id !== null && g.seq !== null ? [{ episodeId: g.episode_id, seq: g.seq + 1 }] : []));
    if (turns.length > 0) yield* ctx.rows.clearContext(turns);
    for (const row of gone) copied[row.memory_type]++;
    removed += gone.length;
  }
  // The snapshot's counts are the rows it holds, when the chunk itself copied them.
  return ctx.rows.snapshotsInDatabase ? { processed, removed, copied } : { processed, removed };
}

/**
 * One memory retracted (DELETE /v1/memories/{id}): the facts it had superseded take over its own
 * end — valid until it was, replaced by what replaced it — so retracting the current value makes
 * the previous one current again, and one in the middle of a chain leaves no gap. Then it goes
 * as forgetRows removes a row (a PostgreSQL snapshot copies it in the same transaction).
 */
export function* retractMemory(cmd: CommandOf<'retractMemory'>, ctx: RuleContext): Step<WriterResults['retractMemory']> {
  const [rowid, id] = cmd.row;
  yield* ctx.rows.reinstateSupersededBy(rowid, id);
  const { removed } = yield* forgetRows({ type: 'forgetRows', rows: [cmd.row], snapshot: cmd.snapshot }, ctx);
  return { removed };
}
