// `migrate`: a SQLite memory file into PostgreSQL (issue 16), namespace by namespace, reusing the
// export's rows (storage/namespace-export.ts) and the PostgreSQL writer's schema migrations.
import type { Db } from '../../shared/db.js';
import { readMeta } from '../../shared/meta.js';
import { parsePostgresUrl, PostgresUrlError } from '../../shared/postgres-url.js';
import { connectWriter } from '../../writer/postgres/connect.js';
import { migratePostgres } from '../../writer/postgres/migrate.js';
import { preparePostgresVectors } from '../../writer/postgres/vectors-setup.js';
import { EmbedderMismatchError } from '../../writer/commands/embedder-mismatch.js';
import { VectorRows } from '../../writer/sqlite/vector-rows.js';
import { CliError, configFrom, UsageError, type Command } from '../terminal/args.js';
import { progressBar } from '../terminal/progress.js';
import { namespaceIdOf, openLockedForReading } from '../storage/offline-db.js';
import { copyNamespace, PgIdConflictError, TargetNotEmptyError } from '../storage/postgres-copy.js';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'copy the SQLite database into PostgreSQL',
  help: `Usage: memory-runtime migrate [--to <postgres-url>] [--namespace <name>] [--merge] [--quiet]

Copies the SQLite database (--db or SERVICE_PATH) into the PostgreSQL database named by --to
(default: SERVICE_DATABASE_URL): entities, episodes and their participants, memories with their
ids and every column (confidence, FSRS stability and difficulty, access counts, timestamps,
archived, promotions), entity links and vectors. The namespace given by --namespace or
SERVICE_NAMESPACE is copied, else every namespace of the file. Each namespace is one
transaction: a failure leaves nothing of it. Vectors from another embedder than the one
PostgreSQL already records are left out; a service started on PostgreSQL embeds those again.
The IVF index is trained again there. Deletion snapshot files are not copied.

The service must be stopped (the command takes <db>.lock). A target namespace that already holds
memories is refused unless --merge is given; then rows already there (same id) are kept, so
running the command again with --merge changes nothing.

Options:
  --to <url>           the PostgreSQL primary (default: SERVICE_DATABASE_URL)
  --merge              copy into a namespace that already holds memories
  -q, --quiet          no progress bar`,
  options: { to: { type: 'string' }, merge: { type: 'boolean' }, quiet: { type: 'boolean', short: 'q' } },
  positionals: { min: 0, max: 0 },
  async run({ values }) {
    const config = configFrom(values);
    const url = typeof values.to === 'string' ? targetOf(values.to) : config.postgres?.url;
    if (!url) throw new UsageError('no PostgreSQL database: give --to <postgres-url> or set SERVICE_DATABASE_URL');
    const explicit = typeof values.namespace === 'string' || process.env.SERVICE_NAMESPACE !== undefined;
    const source = openLockedForReading(config, 'migrate');
    const sql = connectWriter(url);
    try {
      const namespaces = explicit ? [{ name: config.namespace, ...namespaceIdOf(source.db, config.namespace) }] : allNamespaces(source.db);
      await migratePostgres(sql);
      const copyVectors = await vectorsFit(source.db, sql);
      for (const ns of namespaces) {
        const total = ['entities', 'episodes', 'memories'].reduce((sum, table) => sum + (source.db.prepare(
          `SELECT count(*) FROM ${table} WHERE namespace_id = ?`).pluck().get(ns.id) as number), 0);
        const progress = progressBar(`migrate ${ns.name}`, total, values.quiet === true);
        let result;
        try {
          result = await copyNamespace(source.db, ns, sql, { merge: values.merge === true, copyVectors, onRow: () => progress.tick() });
        } finally {
          progress.stop();
        }
        process.stdout.write(`migrated namespace '${result.namespace}': ${result.created.entities} entities, ${result.created.episodes} episodes, ` +
          `${result.created.memories} memories, ${result.vectors} vectors` +
          `${result.reembed > 0 ? ` (${result.reembed} memories to embed again: another embedder)` : ''}; ` +
          `already present: ${result.present.entities} entities, ${result.present.episodes} episodes, ${result.present.memories} memories\n`);
      }
    } catch (error) {
      if (error instanceof TargetNotEmptyError) {
        throw new CliError(`migrate refused: ${error.message}; give --merge to copy into it anyway (rows already there are kept)`);
      }
      if (error instanceof PgIdConflictError) throw new CliError(`migrate failed, nothing of the namespace was copied: ${error.message}`);
      if (error instanceof CliError) throw error;
      throw new CliError(`migrate failed, nothing of the namespace was copied: ${(error as Error).message}`);
    } finally {
      await sql.end();
      source.close();
    }
  },
};

/** --to checked as SERVICE_DATABASE_URL is (shared/postgres-url.ts): the client's canonical URL. */
function targetOf(to: string): string {
  try {
    return parsePostgresUrl(to).url;
  } catch (error) {
    if (error instanceof PostgresUrlError) throw new UsageError(`--to ${error.message}`);
    throw error;
  }
}

function allNamespaces(db: Db): { id: number; name: string; created_at: number }[] {
  return db.prepare<[], { id: number; name: string; created_at: number }>('SELECT id, name, created_at FROM namespaces ORDER BY id').all();
}

/**
 * The file's vectors go across when PostgreSQL records the same embedder and dimension, or none
 * yet (then the file's is recorded, as a service starting with it would).
 */
async function vectorsFit(db: Db, sql: ReturnType<typeof connectWriter>): Promise<boolean> {
  const id = readMeta(db, 'embedder');
  const dimensions = new VectorRows(db, 0).dimensions();
  if (id === null || dimensions === null) return false;
  try {
    await preparePostgresVectors(sql, { id, dimensions }, false);
    return true;
  } catch (error) {
    if (error instanceof EmbedderMismatchError) return false;
    throw error;
  }
}
