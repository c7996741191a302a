// Schema migrations and the namespace row for the PostgreSQL adapter. Nodes that start together
// migrate one at a time (an advisory lock); every pending migration commits in ONE transaction
// (PostgreSQL's DDL is transactional), so a failure leaves the schema as it was.
import { POSTGRES_MIGRATIONS, PG_LOCK_CLASS } from '../../shared/postgres-schema.js';
import type { Sql } from './connect.js';

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
