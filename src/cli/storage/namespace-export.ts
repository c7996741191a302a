// A namespace as JSON lines: a header (namespace, embedder, row counts), then every entity,
// episode (with its participants) and memory (every column, its links and its vector), each
// table in insertion order. Import inserts in that same order, so exporting the imported copy
// gives the same lines again. Internal row ids and namespace ids are left out: they are local
// to a database file.
import type { Db } from '../../shared/db.js';
import { VectorRows } from '../../writer/sqlite/vector-rows.js';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, type ExportHeaderT } from '../../shared/file-formats.js';

type Row = Record<string, unknown>;

export function exportHeader(db: Db, namespace: { id: number; name: string; created_at: number }): ExportHeaderT {
  const count = (table: string) =>
    (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE namespace_id = ?`).get(namespace.id) as { n: number }).n;
  return {
    type: 'header', format: EXPORT_FORMAT, format_version: EXPORT_FORMAT_VERSION,
    namespace: namespace.name, namespace_created_at: namespace.created_at, exported_at: new Date().toISOString(),
    embedder: new VectorRows(db, namespace.id).embedder(),
    counts: { entities: count('entities'), episodes: count('episodes'), memories: count('memories') },
  };
}

/** One exported row: `rowid` is the memory's in this file (never written out: it is local). */
export type ExportRecord =
  | { type: 'entity'; row: Row }
  | { type: 'episode'; row: Row & { participants: { entity_id: string; position: number }[] } }
  | { type: 'memory'; rowid: number; row: Row & { links: { entity_id: string; relation: string }[]; embedding: number[] | null } };

/** The data lines, streamed from the database (statements iterate; nothing is loaded whole). */
export function* exportRows(db: Db, namespaceId: number): Generator<string> {
  for (const record of exportRecords(db, namespaceId)) yield JSON.stringify({ type: record.type, ...record.row });
}

/** The rows of the export as objects, in its order (also what `migrate` copies to PostgreSQL). */
export function* exportRecords(db: Db, namespaceId: number): Generator<ExportRecord> {
  const withoutNamespace = ({ namespace_id: _ns, ...row }: Row) => row;
  for (const row of db.prepare('SELECT * FROM entities WHERE namespace_id = ? ORDER BY rowid').iterate(namespaceId)) {
    yield { type: 'entity', row: withoutNamespace(row as Row) };
  }
  const participants = db.prepare('SELECT entity_id, position FROM episode_participants WHERE episode_id = ? ORDER BY position');
  for (const row of db.prepare('SELECT * FROM episodes WHERE namespace_id = ? ORDER BY rowid').iterate(namespaceId)) {
    const episode = withoutNamespace(row as Row);
    yield { type: 'episode', row: { ...episode, participants: participants.all(episode.id) as { entity_id: string; position: number }[] } };
  }
  const links = db.prepare('SELECT entity_id, relation FROM memory_entities WHERE memory_rowid = ? ORDER BY entity_id');
  const vectors = new VectorRows(db, namespaceId);
  for (const row of db.prepare('SELECT * FROM memories WHERE namespace_id = ? ORDER BY rowid').iterate(namespaceId)) {
    // vector_seq is this file's own bookkeeping (when the vector came, for the shared vector codes): not exported.
    const { rowid, vector_seq: _seq, ...memory } = withoutNamespace(row as Row);
    yield {
      type: 'memory', rowid: rowid as number,
      row: { ...memory, links: links.all(rowid) as { entity_id: string; relation: string }[], embedding: vectors.read(rowid as number) },
    };
  }
}
