// Opening the database from the CLI. Reading (export, snapshots) is safe beside a running
// service: WAL readers never block the writer. Writing (restore, import) is not — the
// service's writer thread must stay the only writer — so it takes the instance lock the
// service holds while it runs, and refuses when the service (or another command) has it.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../../shared/config.js';
import { openDatabase, type Db } from '../../shared/db.js';
import { acquireLock, LockHeldError } from '../../shared/instance-lock.js';
import { ensureNamespace, migrate } from '../../writer/sqlite/migrate.js';
import { addCellPartition } from '../../writer/sqlite/vector-table.js';
import { CliError } from '../terminal/args.js';

export interface WritableDb {
  db: Db;
  /** Id of the namespace, created when missing (with `createdAt` when given). */
  namespaceId(name: string, createdAt?: number): number;
  close(): void;
}

/**
 * `upgradeVectors`: bring a pre-IVF vector table to the current shape first (restore and import
 * write vectors into it; `reembed` leaves it to prepareVectorTable, which may drop it anyway).
 */
export function openForWriting(config: Config, command: string, options: { create: boolean; upgradeVectors?: boolean }): WritableDb {
  if (!options.create && !existsSync(config.dbPath)) throw new CliError(`no database at ${config.dbPath} (set --db or SERVICE_PATH)`);
  mkdirSync(dirname(config.dbPath), { recursive: true });
  const lock = takeLock(config, command);
  let db: Db | null = null;
  try {
    db = openDatabase(config.dbPath, { readonly: false, synchronous: 'FULL' });
    const open = db;
    migrate(open);
    if (options.upgradeVectors) open.transaction(() => addCellPartition(open)).immediate();
    return {
      db: open,
      namespaceId: (name, createdAt) => ensureNamespace(open, name, createdAt),
      close() {
        open.close();
        lock.release();
      },
    };
  } catch (error) {
    db?.close();
    lock.release();
    throw error;
  }
}

/**
 * Read-only, but under the instance lock: for a command that copies the whole file elsewhere
 * (migrate), which must not miss writes the service would make meanwhile.
 */
export function openLockedForReading(config: Config, command: string): { db: Db; close(): void } {
  if (!existsSync(config.dbPath)) throw new CliError(`no database at ${config.dbPath} (set --db or SERVICE_PATH)`);
  const lock = takeLock(config, command);
  try {
    const db = openDatabase(config.dbPath, { readonly: true });
    return { db, close() { db.close(); lock.release(); } };
  } catch (error) {
    lock.release();
    throw error;
  }
}

function takeLock(config: Config, command: string) {
  try {
    return acquireLock(config.dbPath, `memory-runtime ${command}`);
  } catch (error) {
    if (error instanceof LockHeldError) throw new CliError(`cannot ${command} while the database is in use: ${error.message}`);
    throw error;
  }
}

export function openForReading(config: Config): Db {
  if (!existsSync(config.dbPath)) throw new CliError(`no database at ${config.dbPath} (set --db or SERVICE_PATH)`);
  return openDatabase(config.dbPath, { readonly: true });
}

/** The namespace's id, or a one-line error naming the ones that exist. */
export function namespaceIdOf(db: Db, name: string): { id: number; created_at: number } {
  const row = db.prepare<[string], { id: number; created_at: number }>('SELECT id, created_at FROM namespaces WHERE name = ?').get(name);
  if (row) return row;
  const known = db.prepare<[], { name: string }>('SELECT name FROM namespaces ORDER BY name').all().map((r) => r.name);
  throw new CliError(`no namespace '${name}' in this database (it has: ${known.join(', ') || 'none'})`);
}
