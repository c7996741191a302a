// Copies a SQLite memory file, row for row (rowids, ids and vectors included), into a PostgreSQL
// database with the PostgreSQL schema, so a test can put both read adapters over the same data.
// Plain SQL against the schema (src/shared/postgres-schema.ts): the writer's PostgreSQL adapter
// is not there yet, and rows written by the real SQLite writer are the data both must agree on.
import type { Db } from '../../src/shared/db.js';
import { POSTGRES_MIGRATIONS, postgresVectorIndexSql } from '../../src/shared/postgres-schema.js';
import type { Sql } from '../../src/workers/postgres/client.js';
import type { SnapshotFileT } from '../../src/shared/file-formats.js';

/** Rows per INSERT (a 100k-memory file's vectors would not fit one JSON parameter). */
const PAGE_ROWS = 5000;

/** Parents before children (foreign keys); identity columns keep SQLite's values. */
const TABLES = ['meta', 'namespaces', 'entities', 'episodes', 'episode_participants', 'memories', 'memory_entities',
  'memory_vectors', 'vector_generations', 'vector_cells'];

export async function applyPostgresSchema(sql: Sql, dimensions: number): Promise<void> {
  for (const migration of POSTGRES_MIGRATIONS) await sql.unsafe(migration);
  await sql.unsafe(postgresVectorIndexSql(dimensions));
}

/** Every row of the mirrored tables, through json_populate_recordset (bytea as \x hex). */
export async function mirrorIntoPostgres(db: Db, sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    for (const table of TABLES) {
      const columns = (await tx<{ column_name: string }[]>`SELECT column_name FROM information_schema.columns
        WHERE table_name = ${table} AND is_generated = 'NEVER' ORDER BY ordinal_position`).map((c) => c.column_name);
      const list = columns.map((c) => `"${c}"`).join(', ');
      const page = db.prepare(`SELECT ${columns.map((c) => (c === 'rowid' ? 'rowid AS rowid' : c)).join(', ')} FROM ${table} LIMIT ? OFFSET ?`);
      for (let offset = 0; ; offset += PAGE_ROWS) {
        const rows = (page.all(PAGE_ROWS, offset) as Record<string, unknown>[])
          .map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Buffer.isBuffer(v) ? `\\x${v.toString('hex')}` : typeof v === 'bigint' ? Number(v) : v])));
        if (rows.length === 0) break;
        await tx.unsafe(`INSERT INTO ${table} (${list}) OVERRIDING SYSTEM VALUE SELECT ${list} FROM json_populate_recordset(NULL::${table}, $1::text::json)`, [JSON.stringify(rows)]);
      }
    }
    // Identity sequences continue after the copied ids, as SQLite's would.
    for (const [table, column] of [['namespaces', 'id'], ['memories', 'rowid'], ['vector_generations', 'generation'], ['vector_cells', 'cell']]) {
      await tx.unsafe(`SELECT setval(pg_get_serial_sequence('${table}', '${column}'), greatest((SELECT max(${column}) FROM ${table}), 1))`);
    }
  });
  await sql.unsafe('ANALYZE');
}

/** A deletion snapshot (as read from its file) as the PostgreSQL writer keeps it: a header row and one row per memory. */
export async function mirrorSnapshotIntoPostgres(snapshot: SnapshotFileT, sql: Sql, namespaceId: number): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`INSERT INTO deletion_snapshots (snapshot_id, namespace_id, captured_at, entity, embedder)
      VALUES (${snapshot.snapshot_id}, ${namespaceId}, ${snapshot.captured_at}, ${tx.json(snapshot.entity)}, ${snapshot.embedder})`;
    for (const [i, memory] of snapshot.memories.entries()) {
      const rowid = (memory as { rowid?: number }).rowid ?? i + 1;
      await tx`INSERT INTO deletion_snapshot_memories (snapshot_id, memory_rowid, memory) VALUES (${snapshot.snapshot_id}, ${rowid}, ${tx.json(memory as never)})`;
    }
  });
}
