// Deletion snapshots: every row a delete removes is written to
// <db folder>/snapshots/<snapshot_id>.json, with mode 0600, and fsynced before the first of
// the delete's chunks commits. If any step fails the caller aborts the delete, so nothing is
// ever removed without a recovery copy on disk. The file is written under a temporary name
// (`<id>.json.tmp`, which no listing reads) and hard-linked to its name when complete (a link,
// not a rename, never replaces an existing file), then the temporary name is removed, so a
// reader never sees half of one. A crash between the link and the removal leaves a second
// link that keeps the data on disk after the snapshot is deleted; the service removes such
// leftovers when it starts (sweepPartialSnapshots).
//
// Layout: ONE JSON document, line-framed so it can be read a line at a time (see
// snapshot-reader.ts) — the header up to `"memories":[` on the first line, one memory per line
// (a `,` before all but the first), and last the summary line `],"summary":{...}}` giving the
// counts a listing shows without reading the memories. Files written before the framing (one
// line, no summary) are the same document without it, and are still read.
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fail, isDiskFull } from './errors.js';
import type { SnapshotEntityT } from './file-formats.js';

export const SNAPSHOT_FORMAT_VERSION = 1;

export interface SnapshotFile {
  format_version: number;
  snapshot_id: string;
  captured_at: string;
  namespace: string;
  entity: SnapshotEntityT;
  embedder: string | null;
  /** Any iterable: rows are serialised and written one at a time, never as one string. */
  memories: Iterable<Record<string, unknown>>;
}

export interface WrittenSnapshot {
  path: string;
  ownerOnly: boolean;
}

/** Serialised memories are gathered into writes of about this many bytes. */
const WRITE_CHUNK_BYTES = 1 << 20;

/**
 * Removes `<id>.json.tmp` files: a snapshot being written when the process stopped (never linked:
 * its delete never began) or one linked whose temporary name a crash left behind. Called at
 * start-up while holding the database's lock, when no snapshot is being written. Returns how many.
 */
export function sweepPartialSnapshots(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0; // no folder yet: nothing to sweep
  }
  const partial = names.filter((name) => name.endsWith('.json.tmp'));
  for (const name of partial) rmSync(join(dir, name), { force: true });
  return partial.length;
}

export function snapshotPath(dir: string, snapshotId: string): string {
  return join(dir, `${snapshotId}.json`);
}

/** What the summary line says: a listing's counts, read without the memories. */
export interface SnapshotCounts {
  memory_count: number;
  counts: { episodic: number; semantic: number; procedural: number };
  vectors: number;
}

/**
 * Writes the snapshot (the layout above), streamed: the header, then one memory at a time. A busy
 * entity (50,000 memories with 512-d vectors) is more text than V8's longest string, so one
 * string cannot hold it.
 */
export function writeSnapshot(dir: string, snapshot: SnapshotFile): WrittenSnapshot {
  const path = snapshotPath(dir, snapshot.snapshot_id);
  const partial = `${path}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // 'wx' here and link (not rename) below: never overwrite an existing snapshot.
    const fd = openSync(partial, 'wx', 0o600);
    let open = true;
    try {
      const out = new ChunkedWriter(fd);
      for (const piece of snapshotJson(snapshot)) out.write(piece);
      out.flush();
      fsyncSync(fd);
      open = false;
      closeSync(fd);
      linkSync(partial, path);
    } catch (error) {
      // The delete is aborted: leave no partial file behind.
      try {
        if (open) closeSync(fd);
        rmSync(partial, { force: true });
      } catch {
        // the original failure is the one to report
      }
      throw error;
    }
    rmSync(partial);
    // The directory entry must be durable too, or a crash could lose the file.
    const dirFd = openSync(dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
    return { path, ownerOnly: (statSync(path).mode & 0o077) === 0 };
  } catch (error) {
    if (isDiskFull(error)) {
      throw fail.snapshotNoSpace();
    }
    throw fail.snapshotFailed(withoutPaths(error));
  }
}

/**
 * The reason, without the file names Node puts in file-system errors ("EACCES: permission
 * denied, open '/srv/…'"): a response body must not reveal the server's folders.
 */
function withoutPaths(error: unknown): string {
  const errno = error as NodeJS.ErrnoException;
  if (typeof errno?.code === 'string' && typeof errno.syscall === 'string') {
    const description = errno.message.split(',')[0] ?? errno.code;
    return `${description} (${errno.syscall} in the snapshot folder)`;
  }
  return 'unexpected error';
}

/**
 * The snapshot's JSON text in lines: the header, each memory, the summary. JSON.stringify
 * escapes every line break inside a string, so each memory is exactly one line.
 */
function* snapshotJson(snapshot: SnapshotFile): Generator<string> {
  const { memories, ...header } = snapshot;
  const head = JSON.stringify(header);
  yield `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"memories":[\n`;
  const summary = emptyCounts();
  for (const memory of memories) {
    // As inside JSON.stringify of the array: a value JSON cannot hold becomes null.
    yield `${summary.memory_count === 0 ? '' : ','}${JSON.stringify(memory) ?? 'null'}\n`;
    count(summary, memory);
  }
  yield `],"summary":${JSON.stringify(summary)}}\n`;
}

const emptyCounts = (): SnapshotCounts => ({ memory_count: 0, counts: { episodic: 0, semantic: 0, procedural: 0 }, vectors: 0 });

function count(summary: SnapshotCounts, memory: { memory_type?: unknown; embedding?: unknown }): void {
  summary.memory_count++;
  const type = memory.memory_type as keyof SnapshotCounts['counts'];
  if (type in summary.counts) summary.counts[type]++;
  if (memory.embedding !== null && memory.embedding !== undefined) summary.vectors++;
}

/** The summary a written snapshot ends with, for memories held some other way (PostgreSQL's snapshot rows). */
export function countsOf(memories: Iterable<{ memory_type?: unknown; embedding?: unknown }>): SnapshotCounts {
  const summary = emptyCounts();
  for (const memory of memories) count(summary, memory);
  return summary;
}

/** Gathers text into ~1 MiB buffers and writes each completely, however short each write is. */
class ChunkedWriter {
  private pending: string[] = [];
  private pendingBytes = 0;

  constructor(private readonly fd: number) {}

  write(text: string): void {
    if (text.length >= WRITE_CHUNK_BYTES) {
      this.flush();
      writeFully(this.fd, Buffer.from(text, 'utf8'));
      return;
    }
    this.pending.push(text);
    this.pendingBytes += text.length; // UTF-16 units: a close enough measure for batching
    if (this.pendingBytes >= WRITE_CHUNK_BYTES) this.flush();
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const buffer = Buffer.from(this.pending.length === 1 ? this.pending[0] : this.pending.join(''), 'utf8');
    this.pending = [];
    this.pendingBytes = 0;
    writeFully(this.fd, buffer);
  }
}

/** writeSync may write fewer bytes than asked; loop until every byte is on its way to disk. */
function writeFully(fd: number, buffer: Buffer): void {
  let offset = 0;
  while (offset < buffer.length) {
    const written = writeSync(fd, buffer, offset, buffer.length - offset);
    if (!(written > 0)) throw new Error(`short write: ${offset} of ${buffer.length} bytes written, then ${written}`);
    offset += written;
  }
}
