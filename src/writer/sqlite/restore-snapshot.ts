// Putting a deletion snapshot's memories back: same ids and every column (content,
// confidence, stability, timestamps, ...), their entity links and their vectors. Memories
// already present are left alone, so restoring twice changes nothing.
// Two callers: the offline CLI restores a whole file in one transaction (restoreSnapshot), and
// the running service's writer restores it a time-bounded chunk per command (WriteStore.restoreRows),
// so other writes commit between chunks. Both go through SnapshotRestorer, one memory at a time.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/db.js';
import { RowWriter, type RefResolver } from './row-writer.js';
import { VectorRows } from './vector-rows.js';
import type { SnapshotFileT, SnapshotHeaderT } from '../../shared/file-formats.js';

export interface RestoreResult {
  inserted: number;
  present: number;
  vectors: number;
  vectorsSkipped: number;
  droppedLinks: number;
}

type SnapshotMemory = SnapshotFileT['memories'][number];

export class SnapshotRestorer {
  private readonly rows: RowWriter;
  private readonly vectors: VectorRows;
  private readonly refs: RefResolver;
  private inserted = 0;
  private present = 0;

  /**
   * Finds (by name) or recreates the snapshot's entity at once — a chunk may hold no memory of it —
   * with its episode participations (every chunk: cheap, and idempotent).
   */
  constructor(db: Db, namespaceId: number, private readonly snapshot: SnapshotHeaderT, now = Date.now()) {
    this.rows = new RowWriter(db, namespaceId);
    this.vectors = new VectorRows(db, namespaceId);
    const rows = this.rows;
    const ownerId = ownerEntity(rows, snapshot, now);
    rows.putParticipations(ownerId, snapshot.entity.episodes ?? []);
    // Deletion never removes episodes, and removes only the deleted entity (recreated above), so
    // in the snapshot's own namespace every other reference resolves unless that entity was
    // deleted too; references to rows that are not there (or restored elsewhere, --force) are
    // dropped rather than pointed across namespaces.
    this.refs = {
      entity: (id) => (id === snapshot.entity.id ? ownerId : rows.isHere('entities', id) ? id : null),
      episode: (id) => (rows.isHere('episodes', id) ? id : null),
    };
  }

  /** True when the memory was inserted, false when it was already present. */
  put(memory: SnapshotMemory): boolean {
    const { links, embedding, ...columns } = memory;
    const rowid = this.rows.putMemory(columns, links, this.refs);
    if (rowid === null) {
      this.present++;
      return false;
    }
    this.inserted++;
    if (embedding) this.vectors.write(rowid, embedding, this.snapshot.embedder);
    return true;
  }

  get result(): RestoreResult {
    return {
      inserted: this.inserted, present: this.present, vectors: this.vectors.report.written,
      vectorsSkipped: this.vectors.report.skipped, droppedLinks: this.rows.droppedLinks,
    };
  }
}

/**
 * The whole snapshot, its memories taken one at a time (a big file is read in chunks); the caller
 * runs this in one transaction, so a failure changes nothing.
 */
export function restoreSnapshot(db: Db, namespaceId: number, header: SnapshotHeaderT, memories: Iterable<SnapshotMemory>, now = Date.now()): RestoreResult {
  const restorer = new SnapshotRestorer(db, namespaceId, header, now);
  for (const memory of memories) restorer.put(memory);
  return restorer.result;
}

/** The entity the snapshot was taken of, in the target namespace: found by name, else recreated. */
function ownerEntity(rows: RowWriter, snapshot: SnapshotHeaderT, now: number): string {
  const existing = rows.entityIdByName(snapshot.entity.name);
  if (existing !== null) return existing;
  const id = rows.isTaken('entities', snapshot.entity.id) ? randomUUID() : snapshot.entity.id;
  return rows.putEntity({ id, name: snapshot.entity.name, kind: snapshot.entity.kind, created_at: snapshot.entity.created_at ?? now }).id;
}
