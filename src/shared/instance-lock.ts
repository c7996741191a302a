// One process at a time may write a database file: the service (through its writer thread) or
// an offline CLI command (restore, import). Each holds `<db>.lock` for as long as it writes.
//
// The lock is an operating-system lock, not a pid file: `<db>.lock` is a tiny SQLite database
// opened with locking_mode=EXCLUSIVE and written once, so SQLite's unix VFS holds an fcntl()
// write lock on it until the connection closes. The kernel drops that lock when the process
// ends in any way (exit, crash, kill -9, OOM kill), so a restart never has to guess whether
// a recorded pid is still the holder. Guessing went wrong in containers: the service is pid 1
// there, the restarted service is pid 1 again on the same hostname, and a zombie still
// answers kill(pid, 0). Node has no flock(); better-sqlite3 (already the storage layer) gives
// the same kernel-owned lock without a native addon of our own.
//
// Who holds the lock is written beside it in `<db>.lock.json` (pid, host, owner, since), for
// error messages — and, once the service listens, the URL it serves at, so `memory-runtime
// restore` can ask it to restore (a holder without a URL is a CLI command or a service still
// starting). It never decides who holds the lock.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import Database from 'better-sqlite3';

export interface LockInfo {
  pid: number;
  host: string;
  owner: string;
  since: string;
  /** The running service's base URL (e.g. http://127.0.0.1:8080), once it listens; absent otherwise. */
  url?: string;
}

export class LockHeldError extends Error {
  constructor(readonly path: string, readonly holder: LockInfo) {
    super(`${path} is held by ${holder.owner} (pid ${holder.pid} on ${holder.host} since ${holder.since}); ` +
      `stop that process first (the lock is released when it exits)`);
    this.name = 'LockHeldError';
  }
}

export interface InstanceLock {
  readonly path: string;
  /** Records the URL the holder serves at (the service, once it listens). */
  serving(url: string): void;
  release(): void;
}

/** The URL a process on this host reaches a service listening on `host`:`port` at. */
export function localUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

const UNKNOWN_HOLDER: LockInfo = { pid: 0, host: 'unknown', owner: 'another process', since: 'unknown' };

export function lockPathFor(dbPath: string): string {
  return `${dbPath}.lock`;
}

export function holderPathFor(dbPath: string): string {
  return `${lockPathFor(dbPath)}.json`;
}

/** Takes the lock or throws LockHeldError naming the holder. */
/** The owner the service writes into the holder file (the CLI tells a service from an import by it). */
export const SERVICE_OWNER = 'memory-runtime service';

export function acquireLock(dbPath: string, owner: string): InstanceLock {
  const path = lockPathFor(dbPath);
  const connection = tryLock(path);
  if (!connection) throw new LockHeldError(path, readHolder(dbPath) ?? legacyHolder(path) ?? UNKNOWN_HOLDER);
  const mine: LockInfo = { pid: process.pid, host: hostname(), owner, since: new Date().toISOString() };
  try {
    writeHolder(dbPath, mine);
  } catch (error) {
    connection.close(); // the lock would otherwise stay held by a process that failed to start
    throw error;
  }
  let released = false;
  return {
    path,
    serving(url) {
      if (!released) writeHolder(dbPath, { ...mine, url });
    },
    release() {
      if (released) return;
      released = true;
      rmSync(holderPathFor(dbPath), { force: true });
      connection.close();
    },
  };
}

/** The holder of the database's lock, if it is held (for commands that only read). */
export function lockHolder(dbPath: string): LockInfo | null {
  const connection = tryLock(lockPathFor(dbPath));
  if (!connection) return readHolder(dbPath) ?? UNKNOWN_HOLDER;
  connection.close();
  return null;
}

/** An open connection holding the exclusive lock, or null when another connection holds it. */
function tryLock(path: string): Database.Database | null {
  for (let attempt = 0; ; attempt++) {
    // timeout 0: a held lock answers SQLITE_BUSY at once instead of waiting.
    const connection = new Database(path, { timeout: 0 });
    try {
      connection.pragma('locking_mode = EXCLUSIVE');
      // The file's content is irrelevant: no journal file beside it.
      connection.pragma('journal_mode = MEMORY');
      // In exclusive locking mode the first write takes the lock and keeps it until close.
      connection.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS instance_lock (taken_at TEXT); ' +
        "DELETE FROM instance_lock; INSERT INTO instance_lock VALUES (datetime('now')); COMMIT");
      return connection;
    } catch (error) {
      connection.close();
      const code = (error as { code?: string }).code;
      if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return null;
      // Not an SQLite file: the pid-file lock of an earlier version (or a damaged lock file,
      // which nobody can be holding). Replace it once.
      if (attempt === 0 && (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT')) {
        // During an upgrade the old version may still be running under its pid file: its lock
        // is not a kernel lock, so its recorded pid is the only sign of it. Ours (a container
        // restart as the same pid) or a dead one is replaced.
        if (legacyHolder(path)) return null;
        rmSync(path, { force: true });
        continue;
      }
      throw error;
    }
  }
}

/** The holder named by an earlier version's pid file at `path`, if it is another live process on this host. */
function legacyHolder(path: string): LockInfo | null {
  let info: LockInfo;
  try {
    info = JSON.parse(readFileSync(path, 'utf8')) as LockInfo;
  } catch {
    return null; // damaged or not a pid file: nobody can be holding it
  }
  if (!Number.isInteger(info?.pid) || info.host !== hostname() || info.pid === process.pid) return null;
  try {
    process.kill(info.pid, 0);
    return info;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? info : null;
  }
}

/** Written whole under another name, then renamed: a reader never sees half of it. */
function writeHolder(dbPath: string, info: LockInfo): void {
  const path = holderPathFor(dbPath);
  writeFileSync(`${path}.tmp`, JSON.stringify(info), { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

function readHolder(dbPath: string): LockInfo | null {
  try {
    const info = JSON.parse(readFileSync(holderPathFor(dbPath), 'utf8')) as LockInfo;
    return Number.isInteger(info.pid) && typeof info.host === 'string' ? info : null;
  } catch {
    return null;
  }
}
