// One process at a time may write a database file: the service (through its writer thread) or
// an offline CLI command (restore, import). Each takes `<db>.lock` — a small JSON file naming
// its pid and host — for as long as it writes. A lock whose pid is gone (a crash, SIGKILL) is
// stale and taken over. Node has no flock(), and SQLite cannot tell whether another process
// merely has the file open, so a pid file is the dependable signal here.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';

export interface LockInfo {
  pid: number;
  host: string;
  owner: string;
  since: string;
}

export class LockHeldError extends Error {
  constructor(readonly path: string, readonly holder: LockInfo) {
    super(`${path} is held by ${holder.owner} (pid ${holder.pid} on ${holder.host} since ${holder.since}); ` +
      `stop it first, or delete the file if that process is gone`);
    this.name = 'LockHeldError';
  }
}

export interface InstanceLock {
  readonly path: string;
  release(): void;
}

export function lockPathFor(dbPath: string): string {
  return `${dbPath}.lock`;
}

/** Takes the lock or throws LockHeldError naming the live holder. */
export function acquireLock(dbPath: string, owner: string): InstanceLock {
  const path = lockPathFor(dbPath);
  const mine: LockInfo = { pid: process.pid, host: hostname(), owner, since: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify(mine));
      } finally {
        closeSync(fd);
      }
      return { path, release: () => releaseIfMine(path) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(path);
    if (holder && isAlive(holder)) throw new LockHeldError(path, holder);
    // Stale (its process is gone) or unreadable (a crash mid-write): take it over.
    try {
      unlinkSync(path);
    } catch {
      // another process removed it first; the retry decides
    }
  }
  const holder = readHolder(path);
  throw new LockHeldError(path, holder ?? { pid: 0, host: 'unknown', owner: 'another process', since: 'unknown' });
}

/** The live holder of the database's lock, if any (for commands that only read). */
export function lockHolder(dbPath: string): LockInfo | null {
  const holder = readHolder(lockPathFor(dbPath));
  return holder && isAlive(holder) ? holder : null;
}

function readHolder(path: string): LockInfo | null {
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as LockInfo;
    return Number.isInteger(info.pid) && typeof info.host === 'string' ? info : null;
  } catch {
    return null;
  }
}

function isAlive(holder: LockInfo): boolean {
  // A pid means nothing on another machine (a shared volume): assume it is alive.
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function releaseIfMine(path: string): void {
  const holder = readHolder(path);
  if (holder && holder.pid === process.pid) {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
}
