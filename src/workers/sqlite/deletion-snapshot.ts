// First half of deleting an entity, run in the pool: every memory the entity owns or took part
// in is read from ONE read snapshot (a WAL read transaction) and streamed to the recovery file,
// which is fsynced before this returns. The writer is not involved, so other writes go on
// while a large entity's snapshot is written. The writer then deletes exactly the rows listed
// here (entity-deletion.ts), never a row the fsynced file does not hold.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/db.js';
import { onConnection } from '../../shared/connection-statements.js';
import type { Config } from '../../shared/config.js';
import { fail } from '../../shared/errors.js';
import { readMeta, vectorFromBlob } from '../../shared/meta.js';
import type { PoolResults } from '../../shared/protocol/pool.js';
import type { EntityRecord, MemoryType } from '../../shared/schemas.js';
import { SNAPSHOT_FORMAT_VERSION, writeSnapshot } from '../../shared/snapshot-file.js';

/** Rows read per query: bounds memory to one page of rows (with vectors) at a time. */
const PAGE_ROWS = 500;

type Row = Record<string, unknown> & { rowid: number; id: string; memory_type: MemoryType };

export class DeletionSnapshots {
  private readonly s;

  constructor(private readonly db: Db, private readonly namespaceId: number, private readonly config: Config) {
    this.s = onConnection(db, DeletionSnapshots, () => ({
      entity: db.prepare<[number, string], EntityRecord & { created_at: number }>(
        'SELECT id, name, kind, created_at FROM entities WHERE namespace_id = ? AND name = ?'),
      // The delete removes the entity's record too (writer forgetEntity): its participations go in the header.
      participations: db.prepare<[string], [string, number]>(
        'SELECT episode_id, position FROM episode_participants WHERE entity_id = ? ORDER BY episode_id').raw(),
      page: db.prepare<[string, number, number], Row>(`SELECT m.* FROM memories m
        WHERE m.rowid IN (SELECT memory_rowid FROM memory_entities WHERE entity_id = ? AND relation IN ('owner', 'participant'))
          AND m.rowid > ? AND m.rowid <= ? ORDER BY m.rowid LIMIT ${PAGE_ROWS}`),
      linksOf: db.prepare<[number], { entity_id: string; relation: string }>(
        'SELECT entity_id, relation FROM memory_entities WHERE memory_rowid = ?'),
      vectorOf: db.prepare<[bigint], { embedding: Buffer }>('SELECT embedding FROM memory_vectors WHERE rowid = ?'),
      memory: db.prepare<[string, number], Row>('SELECT m.* FROM memories m WHERE m.id = ? AND m.namespace_id = ?'),
      // The memory's owner, else the first entity it links (a turn's speaker): the header needs one, and restore finds it by name.
      ownerOf: db.prepare<[number], EntityRecord & { created_at: number }>(`SELECT e.id, e.name, e.kind, e.created_at
        FROM memories m JOIN memory_entities me ON me.memory_rowid = m.rowid JOIN entities e ON e.id = me.entity_id
        WHERE m.rowid = ? ORDER BY e.id = m.entity_id DESC, me.relation = 'owner' DESC, me.relation = 'participant' DESC, e.name LIMIT 1`),
    }));
  }

  /** Writes the entity's snapshot; `rows` are the [rowid, id] pairs it holds, in rowid order. */
  write(entityName: string, maxRowid: number): PoolResults['snapshotEntity'] {
    // One read transaction: every page below sees the same committed state.
    return this.db.transaction(() => this.writeInSnapshot(entityName, maxRowid))();
  }

  /** Rows up to `maxRowid` only: the ones the writer treats as being deleted (forgetBegin). */
  private writeInSnapshot(entityName: string, maxRowid: number): PoolResults['snapshotEntity'] {
    const entity = this.s.entity.get(this.namespaceId, entityName);
    if (!entity) throw fail.entityNotFound(entityName);
    const first = this.s.page.all(entity.id, 0, maxRowid);
    if (first.length === 0) return { rows: [], snapshot: null };
    const rows: [number, string][] = [];
    const counts: Record<MemoryType, number> = { episodic: 0, semantic: 0, procedural: 0 };
    const memories = this.memories(entity.id, maxRowid, first, (row) => {
      rows.push([row.rowid, row.id]);
      counts[row.memory_type]++;
    });
    const snapshotId = randomUUID();
    const capturedAt = new Date().toISOString();
    const written = writeSnapshot(this.config.snapshotDir, {
      format_version: SNAPSHOT_FORMAT_VERSION, snapshot_id: snapshotId, captured_at: capturedAt,
      namespace: this.config.namespace, entity: { ...entity, episodes: this.s.participations.all(entity.id) },
      embedder: readMeta(this.db, 'embedder'), memories,
    });
    return {
      rows,
      snapshot: {
        snapshot_id: snapshotId, format_version: SNAPSHOT_FORMAT_VERSION, captured_at: capturedAt,
        owner_only: written.ownerOnly, memory_count: rows.length,
        episodic_count: counts.episodic, semantic_count: counts.semantic,
      },
    };
  }

  /**
   * One memory's snapshot (DELETE /v1/memories/{id}), fsynced before the writer removes it: the
   * same file as an entity's, its header naming the memory's owner, whose record and other
   * memories stay (so no participations: restore adds none).
   */
  writeMemory(memoryId: string): PoolResults['snapshotMemory'] {
    return this.db.transaction(() => {
      const row = this.s.memory.get(memoryId, this.namespaceId);
      if (!row) throw fail.memoryNotFound(memoryId);
      const owner = this.s.ownerOf.get(row.rowid);
      if (!owner) throw fail.memoryNotFound(memoryId); // links nothing: not a memory any answer shows
      const vector = this.s.vectorOf.get(BigInt(row.rowid));
      const snapshotId = randomUUID();
      const capturedAt = new Date().toISOString();
      const written = writeSnapshot(this.config.snapshotDir, {
        format_version: SNAPSHOT_FORMAT_VERSION, snapshot_id: snapshotId, captured_at: capturedAt,
        namespace: this.config.namespace, entity: { ...owner, episodes: [] }, embedder: readMeta(this.db, 'embedder'),
        memories: [{ ...withoutLocalState(row), links: this.s.linksOf.all(row.rowid), embedding: vector ? vectorFromBlob(vector.embedding) : null }],
      });
      return {
        rows: [[row.rowid, row.id] as [number, string]],
        snapshot: {
          snapshot_id: snapshotId, format_version: SNAPSHOT_FORMAT_VERSION, captured_at: capturedAt, owner_only: written.ownerOnly,
          memory_count: 1, episodic_count: row.memory_type === 'episodic' ? 1 : 0, semantic_count: row.memory_type === 'semantic' ? 1 : 0,
        },
      };
    })();
  }

  /** The entity's memories with links and vectors, a page at a time, as the writer consumes them. */
  private *memories(entityId: string, maxRowid: number, first: Row[], seen: (row: Row) => void): Generator<Record<string, unknown>> {
    let page = first;
    while (page.length > 0) {
      for (const row of page) {
        seen(row);
        const vector = this.s.vectorOf.get(BigInt(row.rowid));
        yield { ...withoutLocalState(row), links: this.s.linksOf.all(row.rowid), embedding: vector ? vectorFromBlob(vector.embedding) : null };
      }
      page = page.length < PAGE_ROWS ? [] : this.s.page.all(entityId, page[page.length - 1]!.rowid, maxRowid);
    }
  }
}

/** A memory row without this file's own bookkeeping (memories.vector_seq: when its vector came, here). */
function withoutLocalState({ vector_seq: _seq, ...row }: Row): Row {
  return row as Row;
}
