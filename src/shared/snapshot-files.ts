// Finding, reading and checking deletion snapshots in `snapshots/` beside the database. Used by
// the offline CLI (`snapshots`, `restore`) and by the service's pool (GET /v1/snapshots, online
// restore), so both list and refuse the same files for the same reasons.
import { closeSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { snapshotPath } from './snapshot-file.js';
import { validators, type SnapshotFileT, type SnapshotHeaderT } from './file-formats.js';
import {
  checkFramed, openFramed, openSnapshotFile, readMemories, SNAPSHOT_ID, SnapshotFileError, withSnapshotFile,
  type FramedSnapshot, type OpenSnapshotFile, type SnapshotMemoryT,
} from './snapshot-reader.js';

/**
 * Memories per chunk a restore reads (and so holds) at a time: at most 500 or about 4 MiB of
 * their JSON, whichever comes first (a memory with a 1536-d vector is ~30 KB of text).
 */
export const RESTORE_CHUNK = { memories: 500, bytes: 4 << 20 };

export { SNAPSHOT_ID, SnapshotFileError };

/**
 * A snapshot ready to restore: line-framed, checked and still open (its chunks are read through
 * `fd`, which the caller closes with closeChecked), or older, parsed whole and closed.
 */
export type CheckedSnapshot = { framed: FramedSnapshot; fd: number; whole: null } | { framed: null; fd: null; whole: SnapshotFileT };

/**
 * A snapshot held in tables (PostgreSQL), checked whole by the read port; its memories are read
 * by memory rowid a RESTORE_CHUNK at a time (readStoredSnapshotMemories), nothing left open.
 */
export interface StoredSnapshot {
  stored: SnapshotHeaderT;
}

/**
 * One chunk of a snapshot's memories: `next` is the cursor the following chunk is read after (on
 * PostgreSQL the last memory rowid read; opaque to callers), null when none are left.
 */
export interface StoredSnapshotChunk {
  memories: SnapshotMemoryT[];
  next: number | null;
}

/** `<dir>/<id>.json` checked whole — every memory line of a framed file, a chunk at a time — before anything is restored. */
export function checkSnapshotById(dir: string, id: string): CheckedSnapshot {
  return checkSnapshot(snapshotPath(dir, id), id);
}

export function checkSnapshot(path: string, id: string): CheckedSnapshot {
  const file = openSnapshotFile(path);
  try {
    const framed = openFramed(file, id);
    if (!framed) {
      const whole = readSnapshot(file.fd, path, id);
      closeSync(file.fd);
      return { framed: null, fd: null, whole };
    }
    checkFramed(file, framed, RESTORE_CHUNK);
    return { framed, fd: file.fd, whole: null };
  } catch (error) {
    closeSync(file.fd);
    throw error;
  }
}

/** Closes a checked snapshot's file (once every chunk has been read). */
export function closeChecked(checked: CheckedSnapshot): void {
  if (checked.fd !== null) closeSync(checked.fd);
}

/** The header of a checked snapshot. */
export function headerOf(checked: CheckedSnapshot): SnapshotHeaderT {
  if (checked.framed) return checked.framed.header;
  const { memories: _memories, ...header } = checked.whole;
  return header;
}

/** A checked snapshot's memories, one at a time; a framed file is read a chunk at a time (the offline restore). */
export function* memoriesOf(path: string, checked: CheckedSnapshot): Generator<SnapshotMemoryT> {
  if (checked.whole) {
    yield* checked.whole.memories;
    return;
  }
  const file: OpenSnapshotFile = { fd: checked.fd, path };
  for (let from = checked.framed.memoriesStart; from < checked.framed.memoriesEnd;) {
    const chunk = readMemories(file, checked.framed, from, RESTORE_CHUNK);
    yield* chunk.memories;
    from = chunk.next;
  }
}

/** The next chunk of a checked framed snapshot's memories, through the descriptor its check opened. */
export function readMemoriesById(dir: string, id: string, fd: number, framed: FramedSnapshot, from: number): ReturnType<typeof readMemories> {
  return readMemories({ fd, path: snapshotPath(dir, id) }, framed, from, RESTORE_CHUNK);
}

/** `<dir>/<id>.json` checked whole and closed again: its header (the read port's checkSnapshot). */
export function checkedHeaderById(dir: string, id: string): SnapshotHeaderT {
  const checked = checkSnapshotById(dir, id);
  closeChecked(checked);
  return headerOf(checked);
}

/**
 * One RESTORE_CHUNK of `<dir>/<id>.json`'s memories after the first `after` (the read port's
 * snapshotMemories; the cursor is a count here). A file has no index: it is read from its start.
 */
export function memoriesAfterById(dir: string, id: string, after: number): StoredSnapshotChunk {
  const path = snapshotPath(dir, id);
  const checked = checkSnapshot(path, id);
  try {
    const memories: SnapshotMemoryT[] = [];
    let bytes = 0;
    let seen = 0;
    for (const memory of memoriesOf(path, checked)) {
      if (seen++ < after) continue;
      if (memories.length === RESTORE_CHUNK.memories || (memories.length > 0 && bytes >= RESTORE_CHUNK.bytes)) {
        return { memories, next: after + memories.length };
      }
      memories.push(memory);
      bytes += Buffer.byteLength(JSON.stringify(memory));
    }
    return { memories, next: null };
  } finally {
    closeChecked(checked);
  }
}

/** `<dir>/<id>.json` parsed whole (the read port's snapshot read; the online restore streams instead). */
export function readSnapshotById(dir: string, id: string): SnapshotFileT {
  const path = snapshotPath(dir, id);
  return readSnapshot(path, path, id);
}

/**
 * The parsed, checked snapshot, read from `source` (its path, or a descriptor open on it); a
 * missing, unreadable or damaged file is a SnapshotFileError.
 */
export function readSnapshot(source: string | number, path: string, expectedId: string): SnapshotFileT {
  let text: string;
  try {
    text = readFileSync(source, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new SnapshotFileError('missing', `snapshot not found: ${path}`);
    throw new SnapshotFileError('unusable', `cannot read snapshot ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new SnapshotFileError('unusable', `snapshot ${path} is corrupt: not valid JSON (${(error as Error).message})`);
  }
  let snapshot: SnapshotFileT;
  try {
    snapshot = validators.snapshot.parse(parsed);
  } catch (error) {
    throw new SnapshotFileError('unusable', `snapshot ${path} is corrupt: ${(error as Error).message}`);
  }
  if (SNAPSHOT_ID.test(expectedId) && snapshot.snapshot_id !== expectedId) {
    throw new SnapshotFileError('unusable', `snapshot ${path} is corrupt: it names itself ${snapshot.snapshot_id}`);
  }
  return snapshot;
}

export interface SnapshotSummary {
  snapshot_id: string;
  captured_at: string | null;
  namespace: string | null;
  entity: string | null;
  memory_count: number;
  counts: Record<string, number>;
  vectors: number;
  /** Why the file cannot be restored, when it cannot. */
  problem: string | null;
}

/**
 * Every snapshot in the folder, oldest first; damaged files are listed with their problem.
 * A line-framed file costs two short reads (its header and summary lines); an older one is
 * parsed whole once, then remembered by name while its size, modification time, inode and change time hold.
 */
export function listSnapshots(dir: string): SnapshotSummary[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new SnapshotFileError('unusable', `cannot list snapshots in ${dir}: ${(error as Error).message}`);
  }
  const summaries = names.map((name) => summaryOf(dir, name));
  // Files gone since the last listing leave the cache (a changed file replaced its entry).
  const present = new Set(names);
  for (const name of unframed.keys()) if (!present.has(name)) unframed.delete(name);
  return summaries.sort((a, b) => (a.captured_at ?? '').localeCompare(b.captured_at ?? '') || a.snapshot_id.localeCompare(b.snapshot_id));
}

/** Summaries of unframed (older) files, which are parsed whole: by name, valid while the file's `stamp` holds. */
const unframed = new Map<string, { stamp: string; summary: SnapshotSummary }>();

/** How many unframed files' summaries are remembered (tests: the cache does not grow with changes). */
export const rememberedSummaries = (): number => unframed.size;

function summaryOf(dir: string, name: string): SnapshotSummary {
  const id = basename(name, '.json');
  const path = join(dir, name);
  try {
    const framed = withSnapshotFile(path, (file) => openFramed(file, id));
    if (framed) {
      const { header, summary } = framed;
      return {
        snapshot_id: header.snapshot_id, captured_at: header.captured_at, namespace: header.namespace, entity: header.entity.name,
        memory_count: summary.memory_count, counts: summary.counts, vectors: summary.vectors, problem: null,
      };
    }
    // The inode and change time too: a copy that keeps size and modification time (cp -p, rsync -t) is another file.
    const { size, mtimeMs, ino, ctimeMs } = statSync(path);
    const stamp = `${size}\u0000${mtimeMs}\u0000${ino}\u0000${ctimeMs}`;
    const known = unframed.get(name);
    if (known?.stamp === stamp) return known.summary;
    const summary = unframedSummary(path, id);
    unframed.set(name, { stamp, summary });
    return summary;
  } catch (error) {
    return damaged(id, error);
  }
}

function unframedSummary(path: string, id: string): SnapshotSummary {
  try {
    const snapshot = readSnapshot(path, path, id);
    const counts: Record<string, number> = { episodic: 0, semantic: 0, procedural: 0 };
    for (const memory of snapshot.memories) counts[memory.memory_type]++;
    return {
      snapshot_id: snapshot.snapshot_id, captured_at: snapshot.captured_at, namespace: snapshot.namespace,
      entity: snapshot.entity.name, memory_count: snapshot.memories.length, counts,
      vectors: snapshot.memories.filter((m) => m.embedding !== null).length, problem: null,
    };
  } catch (error) {
    return damaged(id, error);
  }
}

function damaged(id: string, error: unknown): SnapshotSummary {
  return {
    snapshot_id: id, captured_at: null, namespace: null, entity: null, memory_count: 0, counts: {}, vectors: 0,
    problem: (error as Error).message,
  };
}
