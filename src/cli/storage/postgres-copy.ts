// `migrate`: one namespace of a SQLite file copied into PostgreSQL, from the export's rows
// (namespace-export.ts) — public ids, every column (FSRS state, timestamps, archived, tiers),
// episodes with their participants, entity links and vectors. One transaction per namespace,
// under the namespace's write lock (as a writer node's flush), so a failure leaves nothing and a
// service node on the same database waits rather than interleaving. Rowids are PostgreSQL's own:
// `promoted_into`, which holds one, is mapped at the end to the rowid here of the memory it names
// — the copied one, or with --merge the one already here by id.
import type { Db } from '../../shared/db.js';
import { PG_LOCK_CLASS } from '../../shared/postgres-schema.js';
import { UNASSIGNED_CELL } from '../../shared/sql-schema.js';
import type { Sql, Tx } from '../../writer/postgres/connect.js';
import { exportRecords } from './namespace-export.js';
import type { CopiedRows } from './namespace-import.js';

type Row = Record<string, unknown>;

export interface CopyResult extends CopiedRows {
  /** Memories left without their vector (another embedder here): the service embeds them again. */
  reembed: number;
}

/** The target namespace already holds memories and the copy was not told to merge. */
export class TargetNotEmptyError extends Error {
  constructor(readonly namespace: string, readonly memories: number) {
    super(`namespace '${namespace}' already holds ${memories} memories in PostgreSQL`);
  }
}

/** A row's id belongs to another namespace of the target (ids are global). */
export class PgIdConflictError extends Error {}

/** Columns PostgreSQL fills itself (namespace_id is the target's, added by insert()). */
const OWN_COLUMNS = new Set(['rowid', 'search', 'namespace_id']);

export interface CopyOptions {
  /** Copy into a namespace that already holds memories (rows present by id are kept). */
  merge: boolean;
  /** The vectors fit the target's space (same embedder and dimension, or none recorded yet). */
  copyVectors: boolean;
  onRow?: () => void;
}

export async function copyNamespace(db: Db, ns: { id: number; name: string; created_at: number }, sql: Sql, options: CopyOptions): Promise<CopyResult> {
  return sql.begin(async (tx) => {
    await tx`INSERT INTO namespaces (name, created_at) VALUES (${ns.name}, ${ns.created_at}) ON CONFLICT (name) DO NOTHING`;
    const [{ id: target }] = await tx<{ id: number }[]>`SELECT id FROM namespaces WHERE name = ${ns.name}`;
    await tx`SELECT pg_advisory_xact_lock(${PG_LOCK_CLASS.write}, ${target})`;
    const [{ n }] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM memories WHERE namespace_id = ${target}`;
    if (n > 0 && !options.merge) throw new TargetNotEmptyError(ns.name, n);
    return new Copier(tx, target, ns.name, options).run(db, ns.id);
  });
}

class Copier {
  private readonly entityIds = new Map<string, string>();
  private readonly rowids = new Map<number, number>();
  private readonly promoted: { rowid: number; into: number }[] = [];
  private readonly columns = new Map<string, string[]>();
  readonly result: CopyResult;

  constructor(private readonly tx: Tx, private readonly namespaceId: number, namespace: string, private readonly options: CopyOptions) {
    this.result = { namespace, created: { entities: 0, episodes: 0, memories: 0 }, present: { entities: 0, episodes: 0, memories: 0 }, vectors: 0, reembed: 0 };
  }

  async run(db: Db, sourceNamespace: number): Promise<CopyResult> {
    for (const record of exportRecords(db, sourceNamespace)) {
      if (record.type === 'entity') await this.entity(record.row);
      else if (record.type === 'episode') await this.episode(record.row);
      else await this.memory(record.rowid, record.row);
      this.options.onRow?.();
    }
    for (const { rowid, into } of this.promoted) {
      await this.tx`UPDATE memories SET promoted_into = ${this.rowids.get(into) ?? null} WHERE rowid = ${rowid}`;
    }
    return this.result;
  }

  /** By id, else by name in the namespace (names are unique there), else inserted with its id. */
  private async entity(row: Row): Promise<void> {
    const id = String(row.id);
    const created = await this.insert('entities', row, 'ON CONFLICT DO NOTHING RETURNING id');
    if (created) {
      this.entityIds.set(id, id);
      this.result.created.entities++;
      return;
    }
    const [here] = await this.tx<{ id: string }[]>`SELECT id FROM entities WHERE namespace_id = ${this.namespaceId} AND (id = ${id} OR name = ${row.name as string})
      ORDER BY id = ${id} DESC LIMIT 1`;
    if (!here) await this.conflict('entities', id);
    this.entityIds.set(id, here.id);
    this.result.present.entities++;
  }

  private async episode(row: Row & { participants: { entity_id: string; position: number }[] }): Promise<void> {
    const { participants, ...episode } = row;
    if (!(await this.insert('episodes', episode, 'ON CONFLICT (id) DO NOTHING RETURNING id'))) {
      await this.ensureHere('episodes', String(episode.id));
      this.result.present.episodes++;
      return;
    }
    for (const p of participants) {
      const entityId = this.entityIds.get(p.entity_id);
      if (entityId !== undefined) {
        await this.tx`INSERT INTO episode_participants (episode_id, entity_id, position) VALUES (${episode.id as string}, ${entityId}, ${p.position})
          ON CONFLICT DO NOTHING`;
      }
    }
    this.result.created.episodes++;
  }

  private async memory(sourceRowid: number, row: Row & { links: { entity_id: string; relation: string }[]; embedding: number[] | null }): Promise<void> {
    const { links, embedding, promoted_into: promotedInto, ...memory } = row;
    const vector = this.options.copyVectors ? embedding : null;
    // A memory the embedder rejected stays rejected only where the same embedder is configured.
    const embedded = vector !== null ? 1 : this.options.copyVectors && memory.embedded === -1 ? -1 : 0;
    const inserted = await this.insert('memories', {
      ...memory,
      entity_id: memory.entity_id == null ? null : this.entityIds.get(String(memory.entity_id)) ?? null,
      embedded, vector_cell: UNASSIGNED_CELL,
    }, 'ON CONFLICT (id) DO NOTHING RETURNING rowid');
    if (!inserted) {
      // Kept as it is here, but a memory copied now may be promoted into it (--merge): its
      // rowid here is what their promoted_into must hold.
      this.rowids.set(sourceRowid, await this.memoryRowidHere(String(memory.id)));
      this.result.present.memories++;
      return;
    }
    const rowid = Number(inserted.rowid);
    this.rowids.set(sourceRowid, rowid);
    if (typeof promotedInto === 'number') this.promoted.push({ rowid, into: promotedInto });
    for (const link of links) {
      const entityId = this.entityIds.get(link.entity_id);
      if (entityId !== undefined) {
        await this.tx`INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (${rowid}, ${entityId}, ${link.relation}) ON CONFLICT DO NOTHING`;
      }
    }
    if (vector !== null) {
      await this.tx`INSERT INTO memory_vectors (rowid, namespace_id, cell, embedding)
        VALUES (${rowid}, ${this.namespaceId}, ${UNASSIGNED_CELL}, ${Buffer.from(new Float32Array(vector).buffer)})`;
      this.result.vectors++;
    } else if (embedded === 0) {
      this.result.reembed++;
    }
    this.result.created.memories++;
  }

  /** The row with these of its columns the target table has; the inserted row (RETURNING) or undefined. */
  private async insert(table: string, row: Row, conflict: string): Promise<Row | undefined> {
    const columns = (await this.columnsOf(table)).filter((c) => c in row);
    const values: Row = { ...Object.fromEntries(columns.map((c) => [c, row[c]])), namespace_id: this.namespaceId };
    const [inserted] = await this.tx.unsafe(
      `INSERT INTO ${table} (${[...columns, 'namespace_id'].join(', ')}) VALUES (${[...columns, 'namespace_id'].map((_, i) => `$${i + 1}`).join(', ')}) ${conflict}`,
      [...columns, 'namespace_id'].map((c) => values[c] as never));
    return inserted;
  }

  private async ensureHere(table: string, id: string): Promise<void> {
    const [here] = await this.tx.unsafe(`SELECT 1 FROM ${table} WHERE id = $1 AND namespace_id = $2`, [id, this.namespaceId]);
    if (!here) await this.conflict(table, id);
  }

  private async memoryRowidHere(id: string): Promise<number> {
    const [here] = await this.tx<{ rowid: number }[]>`SELECT rowid FROM memories WHERE id = ${id} AND namespace_id = ${this.namespaceId}`;
    if (!here) await this.conflict('memories', id);
    return Number(here!.rowid);
  }

  private async conflict(table: string, id: string): Promise<never> {
    const [owner] = await this.tx.unsafe(`SELECT n.name FROM ${table} t JOIN namespaces n ON n.id = t.namespace_id WHERE t.id = $1`, [id]);
    throw new PgIdConflictError(`${table} id ${id} already exists in namespace '${owner?.name ?? '?'}' of the target (ids are global: migrate into that namespace, or into a fresh database)`);
  }

  private async columnsOf(table: string): Promise<string[]> {
    let list = this.columns.get(table);
    if (!list) {
      list = (await this.tx<{ column_name: string }[]>`SELECT column_name FROM information_schema.columns
        WHERE table_name = ${table} AND table_schema = current_schema() ORDER BY ordinal_position`)
        .map((c) => c.column_name).filter((c) => !OWN_COLUMNS.has(c));
      this.columns.set(table, list);
    }
    return list;
  }
}
