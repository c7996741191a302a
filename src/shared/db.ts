// Opening connections. The writer thread opens the only read-write connection; every pool
// worker opens its own read-only one. Both load sqlite-vec so vec0 tables are readable.
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { DEFAULT_READ_MMAP_BYTES } from './config.js';

export type Db = Database.Database;


export interface OpenOptions {
  readonly: boolean;
  synchronous?: 'FULL' | 'NORMAL';
  /** Memory map for a read connection (0 = off); SERVICE_READ_MMAP_BYTES. */
  mmapBytes?: number;
}

export function openDatabase(path: string, options: OpenOptions): Db {
  const db = new Database(path, { readonly: options.readonly, fileMustExist: options.readonly });
  sqliteVec.load(db);
  // Before any temporary table exists (the mode cannot change after): pages freed in the
  // temporary file can be given back (workers/sqlite/namespace-index.ts refills large copies).
  db.pragma('temp.auto_vacuum = INCREMENTAL');
  // Readers wait for a checkpoint instead of failing with SQLITE_BUSY.
  db.pragma('busy_timeout = 5000');
  // Readers memory-map the file: a vec0 KNN reads every vector chunk on each query, and
  // mapped pages spare the per-page copies into SQLite's small page cache (measured −33%
  // on recall at 100k memories). Address space only; resident pages are shared page cache.
  // Mapped pages count in RSS once per connection that touched them, hence the setting.
  if (options.readonly) db.pragma(`mmap_size = ${options.mmapBytes ?? DEFAULT_READ_MMAP_BYTES}`);
  if (!options.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    db.pragma('foreign_keys = ON');
  }
  return db;
}

/**
 * Turns a read connection's memory map off until the returned function restores it. For reads
 * whose pages are touched once (a full codes build, a pool thread's warm-up): mapped, every page
 * read stays counted in the process's resident memory, once per connection that mapped it (~1.5
 * GB for two threads' warm-ups at 1M memories, docs/vector-codes.md); read through SQLite's page
 * cache it is not, and turning the map off unmaps what the connection had mapped.
 */
export function unmapped(db: Db): () => void {
  const bytes = db.pragma('mmap_size', { simple: true }) as number;
  if (bytes > 0) db.pragma('mmap_size = 0');
  return () => {
    if (bytes > 0) db.pragma(`mmap_size = ${bytes}`);
  };
}
