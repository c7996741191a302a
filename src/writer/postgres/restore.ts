// Putting back a deletion snapshot's memories on PostgreSQL (twin of ../restore-snapshot.ts and
// ../row-writer.ts): same ids and every column, their entity links and vectors. A memory already
// in this namespace is left alone (restoring twice changes nothing); an id held by another
// namespace is a conflict (ids are global).
import { randomUUID } from 'node:crypto';
import { fail } from '../../shared/errors.js';
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import type { SnapshotFileT, SnapshotHeaderT } from '../../shared/file-formats.js';
import { UNASSIGNED_CELL } from '../../shared/sql-schema.js';
import type { Tx } from './connect.js';

/** As WriteStore's CHUNK_BUDGET_MS. */
const CHUNK_BUDGET_MS = 40;
/** Columns the restore never copies: this database's own (identity, generated, vector state). */
const OWN_COLUMNS = new Set(['rowid', 'search', 'vector_cell', 'embedded']);

type Table = 'entities' | 'episodes' | 'memories';
type SnapshotMemory = SnapshotFileT['memories'][number];

export class PgSnapshotRestore {
  private memoryColumns: string[] | null = null;

  constructor(private readonly namespaceId: number, private readonly now: () => number = Date.now) {}

  async restoreRows(cmd: CommandOf<'restoreRows'>, tx: Tx): Promise<WriterResults['restoreRows']> {
    const started = performance.now();
    const ownerId = await this.ownerEntity(tx, cmd.snapshot);
    const vectors = await this.vectorSpace(tx);
    let processed = 0;
    let restored = 0;
    for (const memory of cmd.memories) {
      if (processed > 0 && performance.now() - started > CHUNK_BUDGET_MS) break;
      processed++;
      if (await this.put(tx, memory, cmd.snapshot, ownerId, vectors)) restored++;
    }
    return { processed, restored, present: processed - restored };
  }

  private async put(tx: Tx, memory: SnapshotMemory, snapshot: SnapshotHeaderT, ownerId: string,
    vectors: { dimensions: number | null; embedder: string | null }): Promise<boolean> {
    if (await this.present(tx, 'memories', memory.id)) return false;
    const { links, embedding, ...row } = memory as SnapshotMemory & Record<string, unknown>;
    const entity = async (id: string) => (id === snapshot.entity.id ? ownerId : (await this.isHere(tx, 'entities', id)) ? id : null);
    const episodeId = row.episode_id == null ? null : (await this.isHere(tx, 'episodes', String(row.episode_id))) ? String(row.episode_id) : null;
    const values: Record<string, unknown> = {
      ...row, namespace_id: this.namespaceId, episode_id: episodeId,
      entity_id: row.entity_id == null ? null : await entity(String(row.entity_id)),
    };
    if (!('context' in row)) values.context = await this.previousTurn(tx, row, episodeId);
    const columns = (await this.columns(tx)).filter((c) => c in values);
    const [inserted] = await tx<{ rowid: number }[]>`INSERT INTO memories ${tx(values as Record<string, never>, columns)}
      ON CONFLICT (id) DO NOTHING RETURNING rowid`;
    if (!inserted) return false;
    for (const link of links) {
      const entityId = await entity(link.entity_id);
      if (entityId !== null) {
        await tx`INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (${inserted.rowid}, ${entityId}, ${link.relation})
          ON CONFLICT DO NOTHING`;
      }
    }
    // A vector from another embedder or dimension is not mixed in: the backfill re-embeds the row.
    const fits = embedding !== null && (vectors.dimensions === null || embedding.length === vectors.dimensions)
      && (vectors.embedder === null || snapshot.embedder === null || vectors.embedder === snapshot.embedder);
    if (embedding !== null && fits) {
      await tx`INSERT INTO memory_vectors (rowid, namespace_id, cell, embedding)
        VALUES (${inserted.rowid}, ${this.namespaceId}, ${UNASSIGNED_CELL}, ${Buffer.from(new Float32Array(embedding).buffer)})`;
      await tx`UPDATE memories SET embedded = 1, vector_cell = ${UNASSIGNED_CELL} WHERE rowid = ${inserted.rowid}`;
    }
    return true;
  }

  /** The snapshot's entity in this namespace: found by name, else recreated (its own id unless taken). */
  private async ownerEntity(tx: Tx, snapshot: SnapshotHeaderT): Promise<string> {
    const [existing] = await tx<{ id: string }[]>`SELECT id FROM entities WHERE namespace_id = ${this.namespaceId} AND name = ${snapshot.entity.name}`;
    if (existing) return existing.id;
    const [taken] = await tx`SELECT 1 FROM entities WHERE id = ${snapshot.entity.id}`;
    const id = taken ? randomUUID() : snapshot.entity.id;
    await tx`INSERT INTO entities (id, namespace_id, name, kind, created_at)
      VALUES (${id}, ${this.namespaceId}, ${snapshot.entity.name}, ${snapshot.entity.kind}, ${this.now()})`;
    return id;
  }

  private async vectorSpace(tx: Tx): Promise<{ dimensions: number | null; embedder: string | null }> {
    const meta = new Map((await tx<{ key: string; value: string }[]>`SELECT key, value FROM meta
      WHERE key IN ('embedder', 'embedding_dimensions')`).map((r) => [r.key, r.value]));
    const dims = meta.get('embedding_dimensions');
    return { dimensions: dims === undefined ? null : Number(dims), embedder: meta.get('embedder') ?? null };
  }

  /** True when the row is in this namespace; a conflict when another namespace holds the id. */
  private async present(tx: Tx, table: Table, id: string): Promise<boolean> {
    const [owner] = await tx<{ ns: number; name: string }[]>`SELECT t.namespace_id AS ns, n.name FROM ${tx(table)} t
      JOIN namespaces n ON n.id = t.namespace_id WHERE t.id = ${id}`;
    if (!owner) return false;
    if (owner.ns !== this.namespaceId) {
      throw fail.snapshotIdsTaken(`${table} id ${id} already exists in namespace '${owner.name}' (ids are global: restore or import into that namespace, or into a fresh database)`);
    }
    return true;
  }

  private async isHere(tx: Tx, table: Table, id: string): Promise<boolean> {
    const [row] = await tx`SELECT 1 FROM ${tx(table)} WHERE id = ${id} AND namespace_id = ${this.namespaceId}`;
    return row !== undefined;
  }

  private async previousTurn(tx: Tx, row: Record<string, unknown>, episodeId: string | null): Promise<string> {
    if (row.memory_type !== 'episodic' || episodeId === null || typeof row.seq !== 'number' || row.seq <= 0) return '';
    const [turn] = await tx<{ content: string }[]>`SELECT content FROM memories
      WHERE episode_id = ${episodeId} AND seq = ${row.seq - 1} AND memory_type = 'episodic'`;
    return turn?.content ?? '';
  }

  private async columns(tx: Tx): Promise<string[]> {
    this.memoryColumns ??= (await tx<{ column_name: string }[]>`SELECT column_name FROM information_schema.columns
      WHERE table_name = 'memories' AND table_schema = current_schema()`).map((c) => c.column_name).filter((c) => !OWN_COLUMNS.has(c));
    return this.memoryColumns;
  }
}
