// Deletion snapshots when the service runs on PostgreSQL: rows in its database, not files. The
// `snapshots` command lists them with the pool's own query (workers/postgres/snapshots.ts), so
// the CLI and GET /v1/snapshots show the same thing.
import { databaseLabel, type Config, type PostgresConfig } from '../../shared/config.js';
import type { SnapshotSummary } from '../../shared/snapshot-files.js';
import { connectReader } from '../../workers/postgres/client.js';
import { listSnapshotRows } from '../../workers/postgres/snapshots.js';
import { CliError } from '../terminal/args.js';

export async function listStoredSnapshots(config: Config & { postgres: PostgresConfig }): Promise<SnapshotSummary[]> {
  const sql = connectReader(config.postgres.url, { max: 1 });
  try {
    const [namespace] = await sql<{ id: number }[]>`SELECT id FROM namespaces WHERE name = ${config.namespace}`;
    return namespace ? await listSnapshotRows(sql, namespace.id, config.namespace) : [];
  } catch (error) {
    throw new CliError(`cannot list the snapshots in ${databaseLabel(config)}: ${(error as Error).message}`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}
