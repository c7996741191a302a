// Putting a deletion snapshot's memories back: same ids and every column (content,
// confidence, stability, timestamps, ...), their entity links and their vectors. Memories
// already present are left alone, so restoring twice changes nothing. The caller runs this in
// one transaction: any failure leaves the database as it was.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/db.js';
import { RowWriter, type RefResolver } from './row-writer.js';
import { VectorRows } from './vector-rows.js';
import type { SnapshotFileT } from './file-formats.js';

export interface RestoreResult {
  inserted: number;
  present: number;
  vectors: number;
  vectorsSkipped: number;
  droppedLinks: number;
}

export function restoreSnapshot(db: Db, namespaceId: number, snapshot: SnapshotFileT, now = Date.now()): RestoreResult {
  const rows = new RowWriter(db, namespaceId);
  const vectors = new VectorRows(db, namespaceId);
  const ownerId = ownerEntity(rows, snapshot, now);
  // Deletion never removes entities or episodes, so in the snapshot's own namespace every
  // reference still resolves; restored elsewhere (--force), references to rows that are not
  // there are dropped rather than pointed across namespaces.
  const refs: RefResolver = {
    entity: (id) => (id === snapshot.entity.id ? ownerId : rows.isHere('entities', id) ? id : null),
    episode: (id) => (rows.isHere('episodes', id) ? id : null),
  };
  const result: RestoreResult = { inserted: 0, present: 0, vectors: 0, vectorsSkipped: 0, droppedLinks: 0 };
  for (const memory of snapshot.memories) {
    const { links, embedding, ...columns } = memory;
    const rowid = rows.putMemory(columns, links, refs);
    if (rowid === null) {
      result.present++;
      continue;
    }
    result.inserted++;
    if (embedding) vectors.write(rowid, embedding, snapshot.embedder);
  }
  result.vectors = vectors.report.written;
  result.vectorsSkipped = vectors.report.skipped;
  result.droppedLinks = rows.droppedLinks;
  return result;
}

/** The entity the snapshot was taken of, in the target namespace: found by name, else recreated. */
function ownerEntity(rows: RowWriter, snapshot: SnapshotFileT, now: number): string {
  const existing = rows.entityIdByName(snapshot.entity.name);
  if (existing !== null) return existing;
  const id = rows.isTaken('entities', snapshot.entity.id) ? randomUUID() : snapshot.entity.id;
  return rows.putEntity({ id, name: snapshot.entity.name, kind: snapshot.entity.kind, created_at: now }).id;
}
