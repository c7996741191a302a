// POST /v1/snapshots/{snapshot_id}/restore, main-thread side: the online form of
// `memory-runtime restore`. The file is read and checked in the pool's requested lane (a big
// snapshot is tens of MB of JSON: never parsed on the main or writer thread), then the writer
// puts the memories back a time-bounded chunk per command (WriteStore.restoreRows, the same
// 40 ms bound as a delete's chunks), so other writes commit between chunks.
// Idempotent: memories already present are counted, not written, so a second restore — or one
// that a crash cut short, repeated — brings back exactly what is missing. A restored memory is
// recallable as soon as its chunk commits (FTS is indexed in the write); one the snapshot
// holds without a vector is embedded by the backfill.
import type { Config } from '../shared/config.js';
import { fail } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { RestoreResult } from '../shared/schemas.js';
import type { EmbeddingBackfill } from './jobs/embedding-backfill.js';
import type { ReadPool } from './pool/read-pool.js';
import type { WriterClient } from './writer-client.js';
import type { EntityTurns } from './take-turns.js';
import type { SnapshotFileT, SnapshotHeaderT } from '../shared/file-formats.js';

/** Memories sent per writer command; the writer may handle fewer within its time budget. */
const CHUNK_MEMORIES = 500;

export class SnapshotRestore {
  constructor(
    private readonly config: Config,
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    private readonly backfill: EmbeddingBackfill,
    private readonly log: Logger,
    private readonly turns: EntityTurns,
  ) {}

  async restore(snapshotId: string): Promise<RestoreResult> {
    const started = performance.now();
    const { memories, ...header } = await this.pool.run({ op: 'readSnapshot', snapshotId });
    // The service writes only its own namespace; the CLI's --force is the way across.
    if (header.namespace !== this.config.namespace) {
      throw fail.snapshotOtherNamespace(snapshotId, header.namespace, this.config.namespace);
    }
    // After any delete or restore of the same entity already running (EntityTurns).
    return this.turns.run(header.entity.name, () => this.apply(snapshotId, header, memories, started));
  }

  private async apply(snapshotId: string, header: SnapshotHeaderT, memories: SnapshotFileT['memories'], started: number): Promise<RestoreResult> {
    let next = 0;
    let restored = 0;
    let present = 0;
    let commands = 0;
    // An empty snapshot still brings its entity back, as the offline restore does.
    do {
      const step = await this.writer.send({ type: 'restoreRows', snapshot: header, memories: memories.slice(next, next + CHUNK_MEMORIES) });
      next += Math.max(step.processed, 1);
      restored += step.restored;
      present += step.present;
      commands++;
      if (step.restored > 0) this.backfill.poke();
    } while (next < memories.length);
    this.log.info({ snapshotId, restored, present, commands, ms: Math.round(performance.now() - started) }, 'snapshot restored');
    return { snapshot_id: header.snapshot_id, namespace: header.namespace, entity: header.entity.name, restored_count: restored, already_present_count: present };
  }
}
