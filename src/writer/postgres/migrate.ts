// Schema migrations and the namespace row for the PostgreSQL adapter. Nodes that start together
// migrate one at a time (an advisory lock); every pending migration commits in ONE transaction
// (PostgreSQL's DDL is transactional), so a failure leaves the schema as it was.
import { factAttribute } from '../../shared/fact-attributes.js';
import { PG_FACT_ATTRIBUTE_MIGRATIONS, POSTGRES_MIGRATIONS, PG_LOCK_CLASS } from '../../shared/postgres-schema.js';
import type { Sql, Tx } from './connect.js';

export async function migratePostgres(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${PG_LOCK_CLASS.migrate}, 0)`;
    await tx`CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)`;
    const [row] = await tx<{ version: number }[]>`SELECT coalesce(max(version), 0)::int AS version FROM schema_version`;
    const current = row!.version;
    if (current > POSTGRES_MIGRATIONS.length) {
      throw new Error(`database schema version ${current} is newer than this build understands (${POSTGRES_MIGRATIONS.length})`);
    }
    for (let version = current; version < POSTGRES_MIGRATIONS.length; version++) {
      await tx.unsafe(POSTGRES_MIGRATIONS[version]!);
      if (PG_FACT_ATTRIBUTE_MIGRATIONS.includes(version + 1)) await fillFactAttributes(tx);
    }
    if (current < POSTGRES_MIGRATIONS.length) {
      await tx`DELETE FROM schema_version`;
      await tx`INSERT INTO schema_version (version) VALUES (${POSTGRES_MIGRATIONS.length})`;
    }
  });
}

/** The namespace's id, creating its row when new (idempotent: several nodes may start at once). */
export async function ensurePostgresNamespace(sql: Sql, name: string, now = Date.now()): Promise<number> {
  await sql`INSERT INTO namespaces (name, created_at) VALUES (${name}, ${now}) ON CONFLICT (name) DO NOTHING`;
  const [row] = await sql<{ id: number }[]>`SELECT id FROM namespaces WHERE name = ${name}`;
  return row!.id;
}

/** Facts stored before the column existed, or before the rule widened: their attribute by the writer's rule, a page at a time. */
async function fillFactAttributes(tx: Tx): Promise<void> {
  let after = 0;
  for (;;) {
    const page = await tx<{ rowid: number; content: string; fact_attribute: string | null }[]>`SELECT rowid, content, fact_attribute FROM memories
      WHERE memory_type = 'semantic' AND rowid > ${after} ORDER BY rowid LIMIT 1000`;
    if (page.length === 0) return;
    const set = page.flatMap((row) => {
      const attribute = factAttribute(row.content)?.attribute ?? null;
      return attribute === row.fact_attribute ? [] : [{ rowid: row.rowid, attribute }];
    });
    if (set.length > 0) {
      await tx`UPDATE memories SET fact_attribute = s.attribute FROM unnest(${set.map((s) => s.rowid)}::bigint[], ${set.map((s) => s.attribute)}::text[])
        AS s(rowid, attribute) WHERE memories.rowid = s.rowid`;
    }
    after = Number(page[page.length - 1]!.rowid);
  }
}
