// restoreRows: putting a deletion snapshot's memories back — same ids and every column
// (content, confidence, stability, timestamps, ...), their entity links and their vectors.
// Memories already present are left alone, so restoring twice changes nothing; an id another
// namespace holds is a conflict (ids are global). Two callers run this rule: the service's
// writer, a time-bounded chunk per command so other writes commit between chunks (either
// backend), and the offline CLI, a whole file in one transaction (cli/commands/restore.ts).
import { randomUUID } from 'node:crypto';
import { fail } from '../../shared/errors.js';
import { storedFactAttribute } from '../../shared/fact-attributes.js';
import type { SnapshotFileT, SnapshotHeaderT } from '../../shared/file-formats.js';
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import type { EntityKind } from '../../shared/schemas.js';
import type { RuleContext } from './context.js';
import { CHUNK_BUDGET_MS } from './deletes.js';
import type { IdTable, Step, WriteRows } from './rows.js';
import { applyPlacement, placement } from './supersession.js';

type SnapshotMemory = SnapshotFileT['memories'][number];

export interface Restored {
  /** How many of the memories were handled (the rest did not fit the time budget). */
  processed: number;
  restored: number;
  present: number;
  vectors: number;
  /** Not written: another embedder or dimension (the backfill re-embeds those rows). */
  vectorsSkipped: number;
  /** Links left out because their entity does not exist in the target namespace. */
  droppedLinks: number;
}

export function* restoreRows(cmd: CommandOf<'restoreRows'>, ctx: RuleContext): Step<WriterResults['restoreRows']> {
  const { processed, restored, present } = yield* restoreMemories(ctx.rows, cmd.snapshot, cmd.memories, ctx.now(), CHUNK_BUDGET_MS);
  return { processed, restored, present };
}

/** The snapshot's memories, in order, until `budgetMs` has passed (at least one). */
export function* restoreMemories(rows: WriteRows, snapshot: SnapshotHeaderT, memories: Iterable<SnapshotMemory>,
  now: number, budgetMs = Infinity): Step<Restored> {
  const started = performance.now();
  // Found by name or recreated at once: a chunk may hold no memory of the entity.
  const ownerId = yield* ownerEntity(rows, snapshot, now);
  // Every chunk: cheap and idempotent, and the entity delete removed them with the record.
  yield* rows.putParticipations(ownerId, snapshot.entity.episodes ?? []);
  // Deletion never removes episodes, and removes only the deleted entity (recreated above), so
  // in the snapshot's own namespace every other reference resolves unless that entity was
  // deleted too; references to rows that are not there (or restored elsewhere) are dropped
  // rather than pointed across namespaces.
  function* entity(id: string): Step<string | null> {
    return id === snapshot.entity.id ? ownerId : (yield* isHere(rows, 'entities', id)) ? id : null;
  }
  const done: Restored = { processed: 0, restored: 0, present: 0, vectors: 0, vectorsSkipped: 0, droppedLinks: 0 };
  for (const memory of memories) {
    if (done.processed > 0 && performance.now() - started > budgetMs) break;
    done.processed++;
    const { links, embedding, ...row } = memory as SnapshotMemory & Record<string, unknown>;
    if (yield* present(rows, 'memories', memory.id)) {
      done.present++;
      continue;
    }
    const episodeId = row.episode_id == null ? null : (yield* isHere(rows, 'episodes', String(row.episode_id))) ? String(row.episode_id) : null;
    const entityId = row.entity_id == null ? null : yield* entity(String(row.entity_id));
    const occurredAt = typeof row.occurred_at === 'number' ? row.occurred_at : Number(row.created_at);
    // A fact goes back on its attribute's timeline as it stands now: facts stored or retracted
    // since the snapshot decide what replaced it and what it replaces (supersession.ts).
    const place = row.memory_type === 'semantic' && entityId !== null ? yield* placement(rows, entityId, String(row.content), occurredAt) : null;
    const rowid = yield* rows.insertVerbatim({
      ...row,
      ...(place ? { valid_until: place.next?.at ?? null, superseded_by: place.next?.id ?? null } : {}),
      restored_at: now,
      episode_id: episodeId,
      entity_id: entityId,
      // A file written before migration 6 has no `context`: a turn gets its previous turn's
      // text as the writer would have stored it (turns come in insertion order, the previous first).
      context: 'context' in row ? row.context : yield* previousTurn(rows, row, episodeId),
      // A file written before event time (SQLite migration 7, PostgreSQL 5): it occurred when
      // stored, and its attribute is computed by the writer's own rule.
      occurred_at: occurredAt,
      fact_attribute: 'fact_attribute' in row ? row.fact_attribute : storedFactAttribute(row),
    });
    if (rowid === null) { // inserted meanwhile (another node)
      done.present++;
      continue;
    }
    done.restored++;
    if (place) yield* applyPlacement(rows, { id: memory.id, occurred_at: occurredAt }, place);
    for (const link of links) {
      const entityId = yield* entity(link.entity_id);
      if (entityId === null) done.droppedLinks++;
      else yield* rows.insertLink(rowid, entityId, link.relation);
    }
    if (embedding) {
      if (yield* rows.restoreVector(rowid, embedding, snapshot.embedder)) done.vectors++;
      else done.vectorsSkipped++;
    }
  }
  return done;
}

/** The entity the snapshot was taken of, in the target namespace: found by name, else recreated (its own id unless taken). */
function* ownerEntity(rows: WriteRows, snapshot: SnapshotHeaderT, now: number): Step<string> {
  const existing = yield* rows.entityByName(snapshot.entity.name);
  if (existing) return existing.id;
  const id = (yield* rows.holderOf('entities', snapshot.entity.id)) ? randomUUID() : snapshot.entity.id;
  return (yield* rows.insertEntity({ id, name: snapshot.entity.name, kind: snapshot.entity.kind as EntityKind }, snapshot.entity.created_at ?? now)).id;
}

/** True when the row is in this namespace; a conflict when another namespace holds the id. */
function* present(rows: WriteRows, table: IdTable, id: string): Step<boolean> {
  const holder = yield* rows.holderOf(table, id);
  if (!holder) return false;
  if (!holder.here) {
    throw fail.snapshotIdsTaken(`${table} id ${id} already exists in namespace '${holder.namespace}' (ids are global: restore or import into that namespace, or into a fresh database)`);
  }
  return true;
}

function* isHere(rows: WriteRows, table: IdTable, id: string): Step<boolean> {
  return (yield* rows.holderOf(table, id))?.here === true;
}

function* previousTurn(rows: WriteRows, row: Record<string, unknown>, episodeId: string | null): Step<string> {
  if (row.memory_type !== 'episodic' || episodeId === null || typeof row.seq !== 'number' || row.seq <= 0) return '';
  return (yield* rows.turnContent(episodeId, row.seq - 1)) ?? '';
}
