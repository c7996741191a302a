// First half of deleting an entity on PostgreSQL. Unlike SQLite (sqlite/deletion-snapshot.ts),
// the pool writes nothing: it lists the rows the delete takes — the entity's owner and
// participant links up to maxRowid, exactly the rows SQLite's snapshot file holds — and names the
// snapshot. The writer copies each row into deletion_snapshot_memories in the same transaction
// that deletes it (writer/postgres/deletion.ts), so a row is never gone without its copy and the
// snapshot replicates with the delete.
import { randomUUID } from 'node:crypto';
import { fail } from '../../shared/errors.js';
import type { PoolResults } from '../../shared/protocol/pool.js';
import type { EntityRecord, MemoryType } from '../../shared/schemas.js';
import { SNAPSHOT_FORMAT_VERSION } from '../../shared/snapshot-file.js';
import type { Sql } from './client.js';

export async function listDeletion(sql: Sql, namespaceId: number, namespace: string, entityName: string, maxRowid: number): Promise<PoolResults['snapshotEntity']> {
  // One read snapshot: the entity, its rows and the embedder agree.
  return sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
    const [entity] = await tx<(EntityRecord & { created_at: string })[]>`SELECT id, name, kind, created_at FROM entities
      WHERE namespace_id = ${namespaceId} AND name = ${entityName}`;
    if (!entity) throw fail.entityNotFound(entityName);
    // A memory the entity both owns and took part in is listed once.
    const found = await tx<{ rowid: number; id: string; memory_type: MemoryType }[]>`SELECT m.rowid, m.id, m.memory_type FROM memories m
      WHERE m.rowid IN (SELECT memory_rowid FROM memory_entities WHERE entity_id = ${entity.id} AND relation IN ('owner', 'participant'))
        AND m.rowid <= ${maxRowid} ORDER BY m.rowid`;
    if (found.length === 0) return { rows: [], snapshot: null };
    const [embedder] = await tx<{ value: string }[]>`SELECT value FROM meta WHERE key = 'embedder'`;
    const counts: Record<MemoryType, number> = { episodic: 0, semantic: 0, procedural: 0 };
    for (const row of found) counts[row.memory_type]++;
    const snapshotId = randomUUID();
    const capturedAt = new Date().toISOString();
    return {
      rows: found.map((row): [number, string] => [row.rowid, row.id]),
      snapshot: {
        snapshot_id: snapshotId, format_version: SNAPSHOT_FORMAT_VERSION, captured_at: capturedAt,
        // Rows in the service's own database, readable by the roles it grants, as the memories were:
        // no file left readable by other users of the machine.
        owner_only: true, memory_count: found.length,
        episodic_count: counts.episodic, semantic_count: counts.semantic,
      },
      header: {
        format_version: SNAPSHOT_FORMAT_VERSION, snapshot_id: snapshotId, captured_at: capturedAt, namespace,
        // The delete removes the entity's record too (writer forgetEntity): the snapshot keeps it.
        entity: {
          id: entity.id, name: entity.name, kind: entity.kind, created_at: Number(entity.created_at),
          episodes: (await tx<{ episode_id: string; position: number }[]>`SELECT episode_id, position FROM episode_participants
            WHERE entity_id = ${entity.id} ORDER BY episode_id`).map((p): [string, number] => [p.episode_id, p.position]),
        },
        embedder: embedder?.value ?? null,
      },
    };
  });
}

/**
 * One memory's deletion (DELETE /v1/memories/{id}): its row and a snapshot header naming its
 * owner (else the first entity it links), whose record and other memories stay — so no
 * participations. The writer copies the row into the snapshot as it deletes it, as above.
 */
export async function listMemoryDeletion(sql: Sql, namespaceId: number, namespace: string, memoryId: string): Promise<PoolResults['snapshotMemory']> {
  return sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
    const [row] = await tx<{ rowid: number; id: string; memory_type: MemoryType }[]>`SELECT rowid, id, memory_type FROM memories
      WHERE id = ${memoryId} AND namespace_id = ${namespaceId}`;
    if (!row) throw fail.memoryNotFound(memoryId);
    const [owner] = await tx<(EntityRecord & { created_at: string })[]>`SELECT e.id, e.name, e.kind, e.created_at
      FROM memories m JOIN memory_entities me ON me.memory_rowid = m.rowid JOIN entities e ON e.id = me.entity_id
      WHERE m.rowid = ${row.rowid}
      ORDER BY e.id = m.entity_id DESC, me.relation = 'owner' DESC, me.relation = 'participant' DESC, e.name LIMIT 1`;
    if (!owner) throw fail.memoryNotFound(memoryId); // links nothing: not a memory any answer shows
    const [embedder] = await tx<{ value: string }[]>`SELECT value FROM meta WHERE key = 'embedder'`;
    const snapshotId = randomUUID();
    const capturedAt = new Date().toISOString();
    return {
      rows: [[Number(row.rowid), row.id]],
      snapshot: {
        snapshot_id: snapshotId, format_version: SNAPSHOT_FORMAT_VERSION, captured_at: capturedAt, owner_only: true,
        memory_count: 1, episodic_count: row.memory_type === 'episodic' ? 1 : 0, semantic_count: row.memory_type === 'semantic' ? 1 : 0,
      },
      header: {
        format_version: SNAPSHOT_FORMAT_VERSION, snapshot_id: snapshotId, captured_at: capturedAt, namespace,
        entity: { id: owner.id, name: owner.name, kind: owner.kind, created_at: Number(owner.created_at), episodes: [] },
        embedder: embedder?.value ?? null,
      },
    };
  });
}
