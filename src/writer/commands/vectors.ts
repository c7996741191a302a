// Vectors and the IVF index. Vectors computed in the pool are attached to rows not deleted or
// embedded meanwhile; every cell the pool proposes is checked against the namespace's newest
// generation, so a vector computed against replaced centroids lands in the unassigned cell
// (which every recall scans and the indexer empties) instead of in a cell no query probes.
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import { UNASSIGNED_CELL } from '../../shared/sql-schema.js';
import type { Step } from './rows.js';
import type { RuleContext } from './context.js';

/** `proposed` if it is a cell of the namespace's newest generation, else the unassigned cell. */
export function* cellFor(ctx: RuleContext, namespaceId: number, proposed: number): Step<number> {
  if (proposed === UNASSIGNED_CELL) return UNASSIGNED_CELL;
  const newest = yield* ctx.rows.newestGeneration(namespaceId);
  if (!newest || proposed < newest.first) return UNASSIGNED_CELL;
  return (yield* ctx.rows.isCellOf(proposed, newest.generation)) ? proposed : UNASSIGNED_CELL;
}

export function* attachVectors(cmd: CommandOf<'attachVectors'>, ctx: RuleContext): Step<WriterResults['attachVectors']> {
  let attached = 0;
  for (const item of cmd.items) {
    const namespaceId = yield* ctx.rows.unembedded(item.rowid);
    if (namespaceId === undefined) continue;
    const vector = item.vector instanceof Float32Array ? item.vector : Float32Array.from(item.vector as ArrayLike<number>);
    const cell = yield* cellFor(ctx, namespaceId, item.cell);
    yield* ctx.rows.putVector(item.rowid, namespaceId, cell, vector);
    yield* ctx.rows.markEmbedded(item.rowid, cell);
    if (item.mentionedEntityIds.length > 0) yield* ctx.rows.linkMentions(item.rowid, item.mentionedEntityIds);
    attached++;
  }
  // -1: the embedder rejected this text; it stays out of the backlog (a re-embed retries it).
  const unembeddable = cmd.unembeddable ?? [];
  if (unembeddable.length > 0) yield* ctx.rows.markUnembeddable(unembeddable);
  return { attached };
}

export function* installVectorGeneration(cmd: CommandOf<'installVectorGeneration'>, ctx: RuleContext): Step<WriterResults['installVectorGeneration']> {
  const { count, dimensions, data } = cmd.centroids;
  if (count === 0) throw new RangeError('a vector index generation needs at least one centroid');
  const generation = yield* ctx.rows.insertGeneration(cmd.trainedOn, ctx.now());
  // In centroid order: cell ids follow it (the pool maps centroid i to first + i).
  for (let c = 0; c < count; c++) yield* ctx.rows.insertCell(generation, data.subarray(c * dimensions, (c + 1) * dimensions));
  return { generation, cells: count };
}

/**
 * Moves stale vectors into the cells the pool chose; skips any that changed meanwhile. A row
 * marked embedded without a vector goes back to the embedding backlog (`repaired`).
 */
export function* moveVectors(cmd: CommandOf<'moveVectors'>, ctx: RuleContext): Step<WriterResults['moveVectors']> {
  const newest = yield* ctx.rows.newestGeneration(ctx.namespaceId);
  if (!newest) return { moved: 0, repaired: 0 };
  let moved = 0;
  let repaired = 0;
  for (const { rowid, cell } of cmd.moves) {
    const placement = yield* ctx.rows.placement(rowid);
    // Deleted, or already placed by this generation (the backfill, or an earlier move).
    if (!placement || placement.vector_cell >= newest.first) continue;
    if (!placement.has_vector) {
      // Marked embedded but has no vector (a file restored so): back to the embedding backlog.
      yield* ctx.rows.unembed(rowid);
      repaired++;
      continue;
    }
    if ((yield* cellFor(ctx, ctx.namespaceId, cell)) === UNASSIGNED_CELL) continue;
    yield* ctx.rows.moveVector(rowid, cell);
    moved++;
  }
  return { moved, repaired };
}

/** Drops generations older than the newest once no vector lives in their cells. */
export function* retireVectorGenerations(_cmd: CommandOf<'retireVectorGenerations'>, ctx: RuleContext): Step<WriterResults['retireVectorGenerations']> {
  const newest = yield* ctx.rows.newestGeneration(ctx.namespaceId);
  if (!newest) return { retired: 0 };
  if (yield* ctx.rows.olderCellsInUse(newest.first)) return { retired: 0 };
  return { retired: yield* ctx.rows.retireGenerationsBelow(newest.generation) };
}

/**
 * Superseded facts whose validity ended between the cursor and now, their vectors each into the
 * cell the rule calls for (docs/superseded-vectors.md): facts superseded from a moment that has
 * since passed, and, from the start (cursor null), those of a file written before retired cells.
 * A batch of `limit` a command, so writes interleave; the reply says where to go on.
 */
export function* retireSupersededVectors(cmd: CommandOf<'retireSupersededVectors'>, ctx: RuleContext): Step<WriterResults['retireSupersededVectors']> {
  const { supersededThrough, placeVector } = ctx.rows;
  if (!supersededThrough || !placeVector) return { moved: 0, done: true, next: null };
  const now = ctx.now();
  const due = yield* supersededThrough.call(ctx.rows, cmd.after, now, cmd.limit);
  let moved = 0;
  for (const fact of due) if (yield* placeVector.call(ctx.rows, fact.rowid)) moved++;
  // Every fact superseded until now was seen: ones that end later are past this point, and one
  // that ends by now but is superseded after this command was placed by its own write.
  if (due.length < cmd.limit) return { moved, done: true, next: { validUntil: now, rowid: Number.MAX_SAFE_INTEGER } };
  return { moved, done: false, next: due[due.length - 1]! };
}
