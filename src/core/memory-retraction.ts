// DELETE /v1/memories/{id}, main-thread side: one memory retracted as an entity delete removes
// its rows (entity-deletion.ts), at the scale of one row — the pool writes and fsyncs its
// snapshot (PostgreSQL: names it, and the writer copies the row in the transaction that deletes
// it), then the writer removes it. Restoring the snapshot (POST /v1/snapshots/{id}/restore)
// brings it back, placed on its attribute's timeline again (writer/commands/restore.ts).
// It takes a restore's turn (take-turns.ts): after every delete and restore that arrived first,
// before any that arrives later — a restore running meanwhile could put the row back, or the
// retraction remove a row a restore has just answered for. One row: the wait is short.
import type { Logger } from '../shared/logger.js';
import type { ForgetResult } from '../shared/schemas.js';
import type { WriterClient } from './writer-client.js';
import type { ReadPool } from './pool/read-pool.js';
import type { DeleteRestoreTurns } from './take-turns.js';
import type { CommitTrail } from './commit-trail.js';

export class MemoryRetraction {
  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    private readonly log: Logger,
    private readonly turns: DeleteRestoreTurns,
  ) {}

  retract(namespace: string, memoryId: string, trail?: CommitTrail): Promise<ForgetResult> {
    return this.turns.restore(namespace, async () => {
      const { rows, snapshot, header } = await this.pool.run({ op: 'snapshotMemory', namespace, memoryId });
      const [row] = rows;
      if (!snapshot || !row) return { forgotten_count: 0 };
      const { removed } = await this.writer.send(namespace, { type: 'retractMemory', row, ...(header ? { snapshot: header } : {}) }, trail);
      // PostgreSQL's snapshot holds what the chunk copied: nothing when the row went meanwhile.
      if (removed === 0) return { forgotten_count: 0 };
      this.log.info({ snapshotId: snapshot.snapshot_id, backend: header ? 'postgres' : 'sqlite' }, 'memory retracted');
      return { forgotten_count: removed, snapshot };
    });
  }
}
