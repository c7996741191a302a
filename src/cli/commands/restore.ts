// `restore <snapshot_id>`: re-inserts a deletion snapshot's memories into the database.
import { IdConflictError } from '../../writer/sqlite/row-writer.js';
import { CliError, configFrom, type Command } from '../terminal/args.js';
import { snapshotPath } from '../../shared/snapshot-file.js';
import { openForWriting } from '../storage/offline-db.js';
import { restoreMemories } from '../../writer/commands/restore.js';
import { runNow } from '../../writer/commands/run.js';
import { SqliteRows } from '../../writer/sqlite/rows.js';
import { openSnapshot, resolveSnapshot } from '../storage/snapshot-files.js';
import { existsSync } from 'node:fs';
import type { Config } from '../../shared/config.js';
import type { SnapshotHeaderT } from '../../shared/file-formats.js';
import { SNAPSHOT_ID, type SnapshotMemoryT } from '../../shared/snapshot-reader.js';
import type { RestoreResult } from '../../shared/schemas.js';
import { LockHeldError, lockHolder, lockPathFor, SERVICE_OWNER } from '../../shared/instance-lock.js';
import { restoreThroughService, serviceAddress } from './online-restore.js';

export const restoreCommand: Command = {
  name: 'restore',
  summary: "put back the memories a DELETE removed, from its snapshot",
  help: `Usage: memory-runtime restore <snapshot_id | path/to/snapshot.json> [--force]

Re-inserts every memory of a deletion snapshot (snapshots/<snapshot_id>.json beside the
database) with its original id, content, confidence, stability and timestamps, its entity
links and its vector. Memories already present are skipped: restoring twice changes nothing.
The whole restore is one transaction; a damaged snapshot file is refused before anything
is written. The file is read a chunk of memories at a time, so its size does not matter.

While the service runs (it holds <db>.lock and has recorded its URL, or --url says where a
service that records none listens), the command asks it to restore instead
(POST /v1/snapshots/<snapshot_id>/restore): its writer puts the memories back in short
chunks, between other writes, with no downtime. Only a snapshot id of its snapshots/
folder can be restored that way, into the namespace it serves.

With SERVICE_DATABASE_URL set, snapshots are rows in PostgreSQL, written in each delete's own
transaction: only a running service restores them (by snapshot id, found at --url or
MEMORY_RUNTIME_URL, else the URL a service on this machine recorded in <db>.lock.json).

Options:
  --force            restore a snapshot taken in another namespace into --namespace (offline only)
  --url <base>       the running service (default: MEMORY_RUNTIME_URL, else the URL the
                     service recorded in <db>.lock.json when it began listening)
  --api-key <key>    its key (default: MEMORY_RUNTIME_API_KEY, else the first of SERVICE_API_KEYS)`,
  options: { force: { type: 'boolean' }, url: { type: 'string' }, 'api-key': { type: 'string' } },
  positionals: { min: 1, max: 1 },
  async run({ values, positionals }) {
    const config = configFrom(values);
    if (config.postgres) return restoreStored(config, values, positionals[0]);
    const { id, path } = resolveSnapshot(config.snapshotDir, positionals[0]);
    // No database, no service on it: the offline path says what is missing.
    const holder = existsSync(config.dbPath) ? lockHolder(config.dbPath) : null;
    // Only a serving service restores for us: one that wrote its URL into the lock's holder file,
    // or a service that records none (an earlier version, during an upgrade) when the operator
    // says where it is (--url, MEMORY_RUNTIME_URL). Any other holder — an import — keeps the
    // database to itself.
    const urlGiven = typeof values.url === 'string' || process.env.MEMORY_RUNTIME_URL !== undefined;
    if (holder !== null && holder.url === undefined && !(holder.owner === SERVICE_OWNER && urlGiven)) {
      throw new CliError(`cannot restore while the database is in use: ${new LockHeldError(lockPathFor(config.dbPath), holder).message}`);
    }
    if (holder !== null) {
      if (path !== snapshotPath(config.snapshotDir, id) || values.force) {
        throw new CliError(`the database is in use by ${holder.owner} (pid ${holder.pid}): the service restores only by snapshot id from its ` +
          'snapshots folder, into its own namespace; stop it to restore a file elsewhere or with --force');
      }
      const result = await restoreThroughService(serviceAddress(config, values, process.env, holder), holder, id);
      printRestored(result, id, 'through the running service');
      return;
    }
    const { header: snapshot, memories, close } = openSnapshot(path, id);
    try {
      if (snapshot.namespace !== config.namespace && !values.force) {
        throw new CliError(`snapshot ${snapshot.snapshot_id} was taken in namespace '${snapshot.namespace}', not '${config.namespace}'; ` +
          `pass --force to restore it into '${config.namespace}'`);
      }
      restoreOffline(config, snapshot, memories);
    } finally {
      close();
    }
  },
};

/**
 * PostgreSQL: the snapshot is rows in the service's database, and its writer must stay the only
 * writer there — the service restores it, online, in chunks between other writes.
 */
async function restoreStored(config: Config, values: Record<string, string | boolean | undefined>, idOrPath: string): Promise<void> {
  if (!SNAPSHOT_ID.test(idOrPath)) {
    throw new CliError(`SERVICE_DATABASE_URL is set: snapshots are rows in PostgreSQL, restored by snapshot id (a UUID), not '${idOrPath}'; ` +
      'unset it to restore a snapshot file into a SQLite file');
  }
  if (values.force) throw new CliError('--force restores a file offline into a SQLite file; with SERVICE_DATABASE_URL set the service restores, into its own namespace');
  const holder = existsSync(config.dbPath) ? lockHolder(config.dbPath) : null;
  const address = serviceAddress(config, values, process.env, holder);
  if (address.url === null) {
    throw new CliError('SERVICE_DATABASE_URL is set: snapshots are rows in PostgreSQL and only a running service restores them; ' +
      'pass --url or set MEMORY_RUNTIME_URL to say where it listens');
  }
  const id = idOrPath.toLowerCase();
  const result = await restoreThroughService(address, holder, id);
  printRestored(result, id, 'through the running service');
}

function printRestored(result: RestoreResult, id: string, how: string): void {
  const where = `entity '${result.entity}', namespace '${result.namespace}', ${how}`;
  process.stdout.write(result.restored_count === 0
    ? `nothing to restore: all ${result.already_present_count} memories of snapshot ${id} are already present (${where})\n`
    : `restored ${result.restored_count} memories from snapshot ${id} (${where}): ${result.already_present_count} already present\n`);
}

/** The whole snapshot in one transaction: a failure changes nothing. */
function restoreOffline(config: Config, snapshot: SnapshotHeaderT, memories: Iterable<SnapshotMemoryT>): void {
  const target = openForWriting(config, 'restore', { create: false, upgradeVectors: true });
  try {
    const namespaceId = target.namespaceId(config.namespace);
    // The service's restore rule over the file's rows, the whole snapshot at once (no time budget).
    const now = Date.now();
    const rows = new SqliteRows(target.db, namespaceId, () => now);
    const result = target.db.transaction(() => runNow(restoreMemories(rows, snapshot, memories, now))).immediate();
    const where = `entity '${snapshot.entity.name}', namespace '${config.namespace}'`;
    if (result.restored === 0) {
      process.stdout.write(`nothing to restore: all ${result.present} memories of snapshot ${snapshot.snapshot_id} are already present (${where})\n`);
      return;
    }
    const notes = [
      `${result.present} already present`,
      `${result.vectors} vectors`,
      ...(result.vectorsSkipped > 0 ? [`${result.vectorsSkipped} vectors skipped (other embedder or dimension; re-embed)`] : []),
      ...(result.droppedLinks > 0 ? [`${result.droppedLinks} links to entities not in this namespace dropped`] : []),
    ];
    process.stdout.write(`restored ${result.restored} memories from snapshot ${snapshot.snapshot_id} (${where}): ${notes.join(', ')}\n`);
  } catch (error) {
    if (error instanceof CliError) throw error;
    const reason = error instanceof IdConflictError ? error.message : `${(error as Error).message}`;
    throw new CliError(`restore failed, nothing was changed: ${reason}`);
  } finally {
    target.close();
  }
}
