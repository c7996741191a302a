// Deletion snapshots on PostgreSQL are rows, written by the writer in the delete's own
// transaction (deletion_snapshots + deletion_snapshot_memories, src/shared/postgres-schema.ts),
// not files. They are read back in the file format's shape and checked by the same validator, so
// GET /v1/snapshots and restore see one format whichever backend holds them.
import { validators, type SnapshotFileT } from '../../shared/file-formats.js';
import { countsOf, SNAPSHOT_FORMAT_VERSION } from '../../shared/snapshot-file.js';
import { SnapshotFileError, type SnapshotSummary } from '../../shared/snapshot-files.js';
import type { Sql } from './client.js';

interface HeaderRow {
  snapshot_id: string;
  captured_at: string;
  entity: { id: string; name: string; kind: string };
  embedder: string | null;
}

/** The namespace's snapshots, oldest first. */
export async function listSnapshotRows(sql: Sql, namespaceId: number, namespace: string): Promise<SnapshotSummary[]> {
  const rows = await sql<(HeaderRow & { episodic: number; semantic: number; procedural: number; vectors: number })[]>`
    SELECT s.snapshot_id, s.captured_at, s.entity, s.embedder,
      count(m.memory_rowid) FILTER (WHERE m.memory->>'memory_type' = 'episodic') AS episodic,
      count(m.memory_rowid) FILTER (WHERE m.memory->>'memory_type' = 'semantic') AS semantic,
      count(m.memory_rowid) FILTER (WHERE m.memory->>'memory_type' = 'procedural') AS procedural,
      count(m.memory_rowid) FILTER (WHERE jsonb_typeof(m.memory->'embedding') = 'array') AS vectors
    FROM deletion_snapshots s LEFT JOIN deletion_snapshot_memories m ON m.snapshot_id = s.snapshot_id
    WHERE s.namespace_id = ${namespaceId}
    GROUP BY s.snapshot_id ORDER BY s.captured_at, s.snapshot_id`;
  return rows.map((row) => ({
    snapshot_id: row.snapshot_id, captured_at: row.captured_at, namespace, entity: row.entity.name,
    memory_count: row.episodic + row.semantic + row.procedural,
    counts: { episodic: row.episodic, semantic: row.semantic, procedural: row.procedural },
    vectors: row.vectors, problem: null,
  }));
}

/** One snapshot in the file format (memories in rowid order); a missing one is a SnapshotFileError('missing'). */
export async function readSnapshotRows(sql: Sql, namespaceId: number, namespace: string, snapshotId: string): Promise<SnapshotFileT> {
  return sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
    const [header] = await tx<HeaderRow[]>`SELECT snapshot_id, captured_at, entity, embedder FROM deletion_snapshots
      WHERE snapshot_id = ${snapshotId} AND namespace_id = ${namespaceId}`;
    if (!header) throw new SnapshotFileError('missing', `snapshot not found: ${snapshotId}`);
    const memories = (await tx<{ memory: { memory_type: string; embedding?: unknown } }[]>`SELECT memory FROM deletion_snapshot_memories
      WHERE snapshot_id = ${snapshotId} ORDER BY memory_rowid`).map((row) => row.memory);
    try {
      // The same document a snapshot file holds, summary line included.
      return validators.snapshot.parse({ format_version: SNAPSHOT_FORMAT_VERSION, ...header, namespace, memories, summary: countsOf(memories) });
    } catch (error) {
      throw new SnapshotFileError('unusable', `snapshot ${snapshotId} is corrupt: ${(error as Error).message}`);
    }
  }) as Promise<SnapshotFileT>;
}
