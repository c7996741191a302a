// Deleting an entity's memories on PostgreSQL (the twin of WriteStore's forget* commands). The
// snapshot is not a file: each chunk copies the rows it deletes — every column, their links and
// vectors, in the snapshot file's memory shape — into deletion_snapshot_memories in the same
// transaction that deletes them, so a row is never gone without its copy, and both replicate.
// Open deletes (forgetBegin … forgetEnd) are this node's: another node's writer does not see them.
import { fail } from '../../shared/errors.js';
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import { vectorFromBlob } from '../../shared/meta.js';
import type { SnapshotHeaderT } from '../../shared/file-formats.js';
import type { MemoryType } from '../../shared/schemas.js';
import type { Tx } from './connect.js';

/** As WriteStore's CHUNK_BUDGET_MS: a huge entity is deleted over many commands. */
const CHUNK_BUDGET_MS = 40;
/** Rows copied and deleted per statement round. */
const ROUND_ROWS = 250;

export class OpenDeletes {
  /** Deletes in progress, by deletion id. */
  private readonly open = new Map<number, { entityId: string; maxRowid: number }>();

  constructor(private readonly namespaceId: number) {}

  /**
   * The open deletes as they are now, to put back when the transaction (or savepoint) that is
   * about to change them rolls back: a rolled-back forgetBegin must not hold rows, nor a
   * rolled-back forgetEnd release them, when the flush runs again.
   */
  save(): Map<number, { entityId: string; maxRowid: number }> {
    return new Map(this.open);
  }

  restore(saved: Map<number, { entityId: string; maxRowid: number }>): void {
    this.open.clear();
    for (const [id, open] of saved) this.open.set(id, open);
  }

  async forgetBegin(cmd: CommandOf<'forgetBegin'>, tx: Tx): Promise<WriterResults['forgetBegin']> {
    // Row ids only grow, and this namespace's in commit order (the namespace lock): every memory
    // written to it from now on is above maxRowid.
    const [max] = await tx<{ n: number }[]>`SELECT coalesce(max(rowid), 0) AS n FROM memories`;
    const [entity] = await tx<{ id: string }[]>`SELECT id FROM entities WHERE namespace_id = ${this.namespaceId} AND name = ${cmd.entity}`;
    if (entity) this.open.set(cmd.deletionId, { entityId: entity.id, maxRowid: max!.n });
    return { maxRowid: max!.n };
  }

  forgetEnd(cmd: CommandOf<'forgetEnd'>): WriterResults['forgetEnd'] {
    this.open.delete(cmd.deletionId);
    return { status: 'ok' };
  }

  /** The entity's memories up to this rowid are being deleted (0: none are). */
  deletedUpTo(entityId: string): number {
    let upTo = 0;
    for (const open of this.open.values()) if (open.entityId === entityId) upTo = Math.max(upTo, open.maxRowid);
    return upTo;
  }

  /** Some of these memories (by id) are held by an open delete. */
  async anySourceHeld(tx: Tx, ids: string[]): Promise<boolean> {
    if (this.open.size === 0 || ids.length === 0) return false;
    for (const open of this.open.values()) {
      const [hit] = await tx`SELECT 1 FROM memories m JOIN memory_entities me ON me.memory_rowid = m.rowid
        WHERE m.id = ANY(${ids}::text[]) AND m.rowid <= ${open.maxRowid}
          AND me.entity_id = ${open.entityId} AND me.relation IN ('owner', 'participant') LIMIT 1`;
      if (hit) return true;
    }
    return false;
  }

  /** Some of these memories (by rowid) are held by an open delete. */
  async anyRowHeld(tx: Tx, rowids: number[]): Promise<boolean> {
    if (this.open.size === 0 || rowids.length === 0) return false;
    for (const open of this.open.values()) {
      const [hit] = await tx`SELECT 1 FROM memory_entities WHERE memory_rowid = ANY(${rowids}::bigint[])
        AND memory_rowid <= ${open.maxRowid} AND entity_id = ${open.entityId} AND relation IN ('owner', 'participant') LIMIT 1`;
      if (hit) return true;
    }
    return false;
  }

  /** Copies then deletes the listed rows, for at most CHUNK_BUDGET_MS; rows already gone are skipped. */
  async forgetRows(cmd: CommandOf<'forgetRows'>, tx: Tx): Promise<WriterResults['forgetRows']> {
    const snapshot = cmd.snapshot;
    // Without its snapshot a delete could not be undone: refuse rather than delete.
    if (!snapshot) throw fail.internal();
    const started = performance.now();
    let processed = 0;
    let removed = 0;
    const copied: Record<MemoryType, number> = { episodic: 0, semantic: 0, procedural: 0 };
    while (processed < cmd.rows.length && (processed === 0 || performance.now() - started <= CHUNK_BUDGET_MS)) {
      const round = cmd.rows.slice(processed, processed + ROUND_ROWS);
      processed += round.length;
      for (const type of await this.copyAndDelete(tx, snapshot, round)) {
        copied[type]++;
        removed++;
      }
    }
    return { processed, removed, copied };
  }

  /** Copies and deletes the rows still there; answers the memory type of each one removed. */
  private async copyAndDelete(tx: Tx, snapshot: SnapshotHeaderT, rows: [number, string][]): Promise<MemoryType[]> {
    const found = await tx<Record<string, unknown>[]>`SELECT to_jsonb(m) - 'search' AS memory, v.embedding,
        coalesce((SELECT jsonb_agg(jsonb_build_object('entity_id', me.entity_id, 'relation', me.relation))
          FROM memory_entities me WHERE me.memory_rowid = m.rowid), '[]'::jsonb) AS links
      FROM memories m LEFT JOIN memory_vectors v ON v.rowid = m.rowid
      WHERE (m.rowid, m.id) IN (SELECT * FROM unnest(${rows.map((r) => r[0])}::bigint[], ${rows.map((r) => r[1])}::text[]))
        AND m.namespace_id = ${this.namespaceId}
      FOR UPDATE OF m`;
    // Rows gone already (another delete took them) leave nothing: a snapshot header is written
    // with the first row it holds, so a delete that removes nothing leaves no empty snapshot.
    if (found.length === 0) return [];
    await tx`INSERT INTO deletion_snapshots (snapshot_id, namespace_id, captured_at, entity, embedder)
      VALUES (${snapshot.snapshot_id}, ${this.namespaceId}, ${snapshot.captured_at}, ${tx.json(snapshot.entity)}, ${snapshot.embedder})
      ON CONFLICT (snapshot_id) DO NOTHING`;
    const snapshotId = snapshot.snapshot_id;
    const copies = found.map((row) => {
      const memory = row.memory as Record<string, unknown>;
      const embedding = row.embedding as Buffer | null;
      return {
        snapshot_id: snapshotId,
        memory_rowid: memory.rowid as number,
        memory: { ...memory, links: row.links, embedding: embedding ? vectorFromBlob(embedding) : null },
      };
    });
    await tx`INSERT INTO deletion_snapshot_memories ${tx(copies.map((c) => ({ ...c, memory: tx.json(c.memory as never) })))}
      ON CONFLICT DO NOTHING`;
    const deleted = await tx<{ episode_id: string | null; seq: number | null; memory_type: MemoryType }[]>`DELETE FROM memories
      WHERE rowid = ANY(${copies.map((c) => c.memory_rowid)}::bigint[]) RETURNING episode_id, seq, memory_type`;
    // The turn after a forgotten one must not keep its text as context.
    const turns = deleted.filter((d) => d.episode_id !== null && d.seq !== null);
    if (turns.length > 0) {
      await tx`UPDATE memories SET context = '' FROM unnest(${turns.map((t) => t.episode_id!)}::text[], ${turns.map((t) => t.seq! + 1)}::int[]) AS n(episode_id, seq)
        WHERE memories.episode_id = n.episode_id AND memories.seq = n.seq AND memories.memory_type = 'episodic' AND memories.context != ''`;
    }
    return deleted.map((d) => d.memory_type);
  }
}
