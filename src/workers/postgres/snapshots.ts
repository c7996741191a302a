// Deletion snapshots on PostgreSQL are rows, written by the writer in the delete's own
// transaction (deletion_snapshots + deletion_snapshot_memories, src/shared/postgres-schema.ts),
// not files. They are read back in the file format's shape and checked by the same validator, so
// GET /v1/snapshots and restore see one format whichever backend holds them.
import { validators, type SnapshotFileT, type SnapshotHeaderT } from '../../shared/file-formats.js';
import { countsOf, SNAPSHOT_FORMAT_VERSION } from '../../shared/snapshot-file.js';
import { RESTORE_CHUNK, SnapshotFileError, type StoredSnapshotChunk, type SnapshotSummary } from '../../shared/snapshot-files.js';
import type { SnapshotMemoryT } from '../../shared/snapshot-reader.js';
import type { Sql, Tx } from './client.js';

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

async function headerRow(sql: Sql | Tx, namespaceId: number, namespace: string, snapshotId: string): Promise<SnapshotHeaderT> {
  const [header] = await sql<HeaderRow[]>`SELECT snapshot_id, captured_at, entity, embedder FROM deletion_snapshots
    WHERE snapshot_id = ${snapshotId} AND namespace_id = ${namespaceId}`;
  if (!header) throw new SnapshotFileError('missing', `snapshot not found: ${snapshotId}`);
  try {
    return validators.snapshotHeader.parse({ format_version: SNAPSHOT_FORMAT_VERSION, ...header, namespace });
  } catch (error) {
    throw new SnapshotFileError('unusable', `snapshot ${snapshotId} is corrupt: ${(error as Error).message}`);
  }
}

/** The header of a snapshot another namespace holds (in that namespace's name), or null. */
async function foreignHeader(sql: Sql, namespaceId: number, snapshotId: string): Promise<SnapshotHeaderT | null> {
  const [row] = await sql<(HeaderRow & { namespace: string; namespace_id: number })[]>`SELECT s.snapshot_id, s.captured_at, s.entity, s.embedder,
      n.name AS namespace, s.namespace_id FROM deletion_snapshots s JOIN namespaces n ON n.id = s.namespace_id
    WHERE s.snapshot_id = ${snapshotId}`;
  if (!row || row.namespace_id === namespaceId) return null;
  const { namespace_id: _, ...header } = row;
  try {
    return validators.snapshotHeader.parse({ format_version: SNAPSHOT_FORMAT_VERSION, ...header });
  } catch (error) {
    throw new SnapshotFileError('unusable', `snapshot ${snapshotId} is corrupt: ${(error as Error).message}`);
  }
}

/**
 * The snapshot's header once every memory row has been read and checked, a RESTORE_CHUNK at a
 * time (as a file is checked line by line): a damaged row is refused before a restore writes anything.
 */
export async function checkSnapshotRows(sql: Sql, namespaceId: number, namespace: string, snapshotId: string): Promise<SnapshotHeaderT> {
  // Another namespace's snapshot is found, not "missing": its header (naming that namespace) is
  // answered unread, and the restore refuses it as it refuses a file taken elsewhere (409
  // SNAPSHOT_CONFLICT) — the tables hold every namespace's snapshots, as the folder holds every file.
  const foreign = await foreignHeader(sql, namespaceId, snapshotId);
  if (foreign) return foreign;
  const header = await headerRow(sql, namespaceId, namespace, snapshotId);
  for (let after: number | null = 0; after !== null;) after = (await snapshotMemoryRows(sql, namespaceId, namespace, snapshotId, after)).next;
  return header;
}

/**
 * One chunk of the snapshot's memories above memory rowid `after`, in rowid order: at most
 * RESTORE_CHUNK.memories, and no row starting past RESTORE_CHUNK.bytes of JSON (the first row
 * always comes, as a file's first line does). Each is checked as a file's memory line is.
 */
export async function snapshotMemoryRows(sql: Sql | Tx, namespaceId: number, namespace: string, snapshotId: string, after: number): Promise<StoredSnapshotChunk> {
  // The page is cut to the memory count first, so the byte sum never reads past one chunk.
  const rows = await sql<{ memory_rowid: number; memory: unknown; fetched: number }[]>`
    SELECT memory_rowid, memory, fetched FROM (
      SELECT memory_rowid, memory, count(*) OVER () AS fetched, sum(size) OVER (ORDER BY memory_rowid) - size AS before
      FROM (SELECT memory_rowid, memory, octet_length(memory::text) AS size FROM deletion_snapshot_memories
        WHERE snapshot_id = ${snapshotId} AND memory_rowid > ${after} ORDER BY memory_rowid LIMIT ${RESTORE_CHUNK.memories + 1}) page
    ) sized
    WHERE before < ${RESTORE_CHUNK.bytes} ORDER BY memory_rowid LIMIT ${RESTORE_CHUNK.memories}`;
  // No rows: the end of the snapshot, or no such snapshot (here) at all.
  if (rows.length === 0) await headerRow(sql, namespaceId, namespace, snapshotId);
  const memories = rows.map((row) => {
    try {
      return validators.snapshotMemory.parse(row.memory) as SnapshotMemoryT;
    } catch (error) {
      throw new SnapshotFileError('unusable', `snapshot ${snapshotId} is corrupt: memory ${row.memory_rowid}: ${(error as Error).message}`);
    }
  });
  const last = rows.at(-1);
  return { memories, next: last && last.fetched > rows.length ? last.memory_rowid : null };
}
