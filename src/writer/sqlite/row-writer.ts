// Verbatim inserts for offline restore and import: rows keep their public ids and every
// column (confidence, stability, timestamps, archived, ...), unlike the writer's commands,
// which create new memories. Columns come from the live table, so a later migration that
// adds a column with a default needs no change here, and a file written before it still loads.
// A row whose id is already in this namespace is left alone, which makes both commands
// idempotent; an id that belongs to another namespace is a conflict (ids are global).
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../shared/db.js';
import { TURN_CONTENT_SQL } from '../../shared/sql-schema.js';
import { storedFactAttribute } from '../../shared/fact-attributes.js';

type Row = Record<string, unknown>;
type Table = 'entities' | 'episodes' | 'memories';

export class IdConflictError extends Error {
  constructor(table: Table, id: string, namespace: string) {
    super(`${table} id ${id} already exists in namespace '${namespace}' (ids are global: restore or import into that namespace, or into a fresh database)`);
    this.name = 'IdConflictError';
  }
}

/** Maps an id in the file to the id to store (null: the referenced row does not exist here). */
export interface RefResolver {
  entity(id: string): string | null;
  episode(id: string): string | null;
}

export class RowWriter {
  /** Links left out because their entity does not exist in the target namespace. */
  droppedLinks = 0;
  private readonly statements = new Map<string, Statement>();
  private readonly columns = new Map<Table, Set<string>>();

  constructor(private readonly db: Db, private readonly namespaceId: number) {}

  /** By id, else by name in this namespace (names are unique there), else inserted with its id. */
  putEntity(row: Row): { id: string; created: boolean } {
    const id = String(row.id);
    if (this.present('entities', id)) return { id, created: false };
    const byName = this.entityIdByName(String(row.name));
    if (byName !== null) return { id: byName, created: false };
    this.insert('entities', { ...row, namespace_id: this.namespaceId });
    return { id, created: true };
  }

  putEpisode(row: Row, participants: { entity_id: string; position: number }[], refs: RefResolver): boolean {
    if (this.present('episodes', String(row.id))) return false;
    this.insert('episodes', { ...row, namespace_id: this.namespaceId });
    for (const p of participants) {
      const entityId = refs.entity(p.entity_id);
      if (entityId !== null) {
        this.statement('INSERT OR IGNORE INTO episode_participants (episode_id, entity_id, position) VALUES (?, ?, ?)')
          .run(row.id, entityId, p.position);
      }
    }
    return true;
  }

  /** The entity's episode participations ([episode id, position]), for the episodes this namespace holds; present ones are kept. */
  putParticipations(entityId: string, episodes: [string, number][]): void {
    if (episodes.length === 0) return;
    // One statement for the lot: an entity may have taken part in thousands of episodes.
    this.statement(`INSERT OR IGNORE INTO episode_participants (episode_id, entity_id, position)
      SELECT p.value ->> 0, ?, p.value ->> 1 FROM json_each(?) p
      WHERE EXISTS (SELECT 1 FROM episodes WHERE id = p.value ->> 0 AND namespace_id = ?)`).run(entityId, JSON.stringify(episodes), this.namespaceId);
  }

  /** The new rowid, or null when the memory is already here. */
  putMemory(row: Row, links: { entity_id: string; relation: string }[], refs: RefResolver): number | null {
    if (this.present('memories', String(row.id))) return null;
    const episodeId = row.episode_id == null ? null : refs.episode(String(row.episode_id));
    const rowid = this.insertVerbatim({
      ...row,
      entity_id: row.entity_id == null ? null : refs.entity(String(row.entity_id)),
      episode_id: episodeId,
      // A file written before migration 6 has no `context`: a turn gets its previous turn's
      // text as the writer would have stored it (turns come in insertion order, the previous first).
      context: 'context' in row ? row.context : this.previousTurn(row, episodeId),
      // A file written before migration 7: it occurred when stored, and its attribute is computed as the writer would.
      occurred_at: 'occurred_at' in row ? row.occurred_at : row.created_at,
      fact_attribute: 'fact_attribute' in row ? row.fact_attribute : storedFactAttribute(row),
    });
    for (const link of links) {
      const entityId = refs.entity(link.entity_id);
      if (entityId === null) this.droppedLinks++;
      else this.statement('INSERT OR IGNORE INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, ?)')
        .run(rowid, entityId, link.relation);
    }
    return rowid;
  }

  /** The memory into this namespace as given, but for this database's own columns: its new rowid. */
  insertVerbatim(row: Row): number {
    // Vector state is this database's: the row counts as embedded only once VectorRows.write
    // stores its vector here (else the backfill embeds it), and starts in no IVF cell.
    const { rowid: _ignored, vector_cell: _cell, embedded: _embedded, vector_seq: _seq, ...fields } = row;
    return Number(this.insert('memories', { ...fields, namespace_id: this.namespaceId }).lastInsertRowid);
  }

  private previousTurn(row: Row, episodeId: string | null): string {
    if (row.memory_type !== 'episodic' || episodeId === null || typeof row.seq !== 'number' || row.seq <= 0) return '';
    return (this.statement(TURN_CONTENT_SQL).pluck().get(episodeId, row.seq - 1) as string | undefined) ?? '';
  }

  /** True when the row is in this namespace; throws when the id is taken by another one. */
  present(table: Table, id: string): boolean {
    const owner = this.ownerOf(table, id);
    if (!owner) return false;
    if (owner.ns !== this.namespaceId) throw new IdConflictError(table, id, owner.name);
    return true;
  }

  /** True only when the row exists in this namespace (no conflict check). */
  isHere(table: Table, id: string): boolean {
    return this.ownerOf(table, id)?.ns === this.namespaceId;
  }

  /** True when any namespace has a row with this id. */
  isTaken(table: Table, id: string): boolean {
    return this.ownerOf(table, id) !== undefined;
  }

  entityIdByName(name: string): string | null {
    return (this.statement('SELECT id FROM entities WHERE namespace_id = ? AND name = ?').get(this.namespaceId, name) as
      { id: string } | undefined)?.id ?? null;
  }

  /** The namespace holding this id (ids are global), if any. */
  ownerOf(table: Table, id: string): { ns: number; name: string } | undefined {
    return this.statement(`SELECT t.namespace_id AS ns, n.name AS name FROM ${table} t
      JOIN namespaces n ON n.id = t.namespace_id WHERE t.id = ?`).get(id) as { ns: number; name: string } | undefined;
  }

  private insert(table: Table, row: Row) {
    const known = this.columnsOf(table);
    const names = Object.keys(row).filter((name) => known.has(name));
    const sql = `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map((n) => `@${n}`).join(', ')})`;
    return this.statement(sql).run(Object.fromEntries(names.map((n) => [n, row[n]])));
  }

  private columnsOf(table: Table): Set<string> {
    let set = this.columns.get(table);
    if (!set) {
      set = new Set((this.db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name).filter((c) => c !== 'rowid'));
      this.columns.set(table, set);
    }
    return set;
  }

  private statement(sql: string) {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }
}
