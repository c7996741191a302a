// DELETE /v1/entities/{name}, main-thread side. Snapshot first, then delete in small steps:
//   1. the pool reads the entity's memories from one read snapshot and writes + fsyncs the
//      recovery file (workers/deletion-snapshot.ts) — the writer keeps serving other writes meanwhile;
//   2. the writer deletes exactly the rows that file lists, a time-bounded chunk per command
//      (WriteStore.forgetRows), so other writes commit between chunks.
// On PostgreSQL step 1 only lists the rows and names the snapshot (workers/postgres/
// deletion-snapshot.ts): each chunk of step 2 copies its rows into the snapshot tables in the
// transaction that deletes them — atomic and replicated, no file.
// Before step 1 the writer is told the delete is open (forgetBegin): the snapshot holds the
// entity's rows up to the rowid it returns, and until forgetEnd the writer treats those rows as
// gone — a repeated fact gets a new row instead of landing on one about to be deleted, and an
// `end` whose turns are among them stores nothing.
// Last (forgetEntity), the entity itself goes — its record, participations and the mention links
// to it — unless a memory of it was written meanwhile; the snapshot's header holds the record
// and participations, so a restore brings the entity back. An entity with no memory at all goes
// without a snapshot (there is nothing to restore but its name).
// Nothing is deleted that the fsynced file does not hold. A crash between chunks leaves some
// rows deleted and all of them in the file: `memory-runtime restore <snapshot_id>` brings the
// entity back whole. Memories written to the entity after the snapshot was read are not in
// it and are kept (they count as written after the delete).
// A delete waits while any restore of its namespace (or another delete of the same entity there)
// runs (DeleteRestoreTurns):
// a restore's chunks committing after forgetBegin would be written above its maxRowid and survive,
// and a restore of another entity's snapshot brings back memories this entity took part in.
import type { Logger } from '../shared/logger.js';
import { MEMORY_TYPES, type ForgetResult, type MemoryType } from '../shared/schemas.js';
import type { WriterClient } from './writer-client.js';
import type { ReadPool } from './pool/read-pool.js';
import type { DeleteRestoreTurns } from './take-turns.js';
import type { CommitTrail } from './commit-trail.js';

/** Rows sent per writer command; the writer may handle fewer within its time budget. */
const CHUNK_ROWS = 2_000;

export class EntityDeletion {
  private nextDeletionId = 1;

  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    private readonly log: Logger,
    private readonly turns: DeleteRestoreTurns,
  ) {}

  /**
   * Waits for any restore, and any delete of the same entity, of the namespace that arrived first; then deletes.
   * `trail` is told the position of each writer command's commit (the answer's Memory-Position).
   */
  forget(namespace: string, entity: string, trail?: CommitTrail): Promise<ForgetResult> {
    return this.turns.delete(namespace, entity, () => this.forgetNow(namespace, entity, trail));
  }

  private async forgetNow(namespace: string, entity: string, trail: CommitTrail | undefined): Promise<ForgetResult> {
    const deletionId = this.nextDeletionId++;
    try {
      return await this.run(namespace, deletionId, entity, trail);
    } finally {
      // Sent before the answer, so any write the client sends after it is handled after it.
      await this.writer.send(namespace, { type: 'forgetEnd', deletionId }, trail).catch(() => {});
    }
  }

  private async run(namespace: string, deletionId: number, entity: string, trail: CommitTrail | undefined): Promise<ForgetResult> {
    const started = performance.now();
    const { maxRowid } = await this.writer.send(namespace, { type: 'forgetBegin', deletionId, entity }, trail);
    const { rows, snapshot, header } = await this.pool.run({ op: 'snapshotEntity', namespace, entity, maxRowid });
    if (!snapshot) {
      await this.writer.send(namespace, { type: 'forgetEntity', deletionId }, trail);
      return { forgotten_count: 0 };
    }
    const snapshotMs = performance.now() - started;
    // Where the snapshot lives, for the log: PostgreSQL copies rows as it deletes them.
    const where = header ? { backend: 'postgres', snapshotIn: 'deletion_snapshot_memories' } : { backend: 'sqlite', snapshotIn: `snapshots/${snapshot.snapshot_id}.json` };
    let next = 0;
    let removed = 0;
    let commands = 0;
    const copied: Record<MemoryType, number> = { episodic: 0, semantic: 0, procedural: 0 };
    try {
      while (next < rows.length) {
        // PostgreSQL: each chunk copies its rows into the snapshot `header` names, in its own transaction.
        const step = await this.writer.send(namespace, { type: 'forgetRows', rows: rows.slice(next, next + CHUNK_ROWS), ...(header ? { snapshot: header } : {}) }, trail);
        next += step.processed;
        removed += step.removed;
        for (const type of MEMORY_TYPES) copied[type] += step.copied?.[type] ?? 0;
        commands++;
      }
      await this.writer.send(namespace, { type: 'forgetEntity', deletionId }, trail);
    } catch (error) {
      // The error's answer carries no snapshot: the operator needs its id to restore or repeat.
      this.log.error({ ...where, snapshotId: snapshot.snapshot_id, removed, of: rows.length, reason: (error as Error).message },
        header ? 'entity delete stopped midway: the snapshot holds every row deleted so far; restore it or repeat the DELETE'
          : 'entity delete stopped midway: the snapshot holds every row; restore it or repeat the DELETE');
      throw error;
    }
    const deleteMs = performance.now() - started - snapshotMs;
    // PostgreSQL's snapshot holds the rows copied, which are the rows removed: a row listed but
    // gone by its chunk (another node's delete) is in neither, and with none removed there is
    // no snapshot at all. SQLite's file holds every row listed, fsynced before the first chunk.
    const answered = header ? { ...snapshot, memory_count: removed, episodic_count: copied.episodic, semantic_count: copied.semantic } : snapshot;
    if (header && removed === 0) {
      this.log.info({ ...where, entity, listed: rows.length, commands }, 'entity delete removed nothing (its memories were already gone): no snapshot');
      return { forgotten_count: 0 };
    }
    // Operators match a large delete's duration to its snapshot (and to a slow spell, if any).
    this.log.info({ ...where, snapshotId: snapshot.snapshot_id, memories: removed, inSnapshot: answered.memory_count, listed: rows.length,
      snapshotMs: Math.round(snapshotMs), deleteMs: Math.round(deleteMs), commands }, 'entity deleted');
    return { forgotten_count: removed, snapshot: answered };
  }
}
