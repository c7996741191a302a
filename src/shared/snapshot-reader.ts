// Reading a line-framed deletion snapshot (layout: shared/snapshot-file.ts) a bounded piece at a
// time, so restoring or listing one never holds the whole file: the header line and the summary
// line are read on their own, the memories a chunk of lines at a time from a byte offset.
// Files written before the framing are one line; openFramed says so (null) and the caller reads
// them whole (snapshot-files.ts).
// A restore opens the file once (openSnapshotFile) and reads every chunk through that descriptor
// — pool threads share the process's descriptors — so removing, renaming or touching the file
// while it streams changes nothing: the restore reads the file it checked.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { validators, type SnapshotFileT, type SnapshotHeaderT } from './file-formats.js';
import type { SnapshotCounts } from './snapshot-file.js';
import { MAX_EMBEDDING_DIMENSIONS } from './config.js';
import { MAX_CONTENT_LENGTH } from './schemas.js';

export const SNAPSHOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type SnapshotMemoryT = SnapshotFileT['memories'][number];

/** Why a snapshot cannot be used: `missing` (no such file) or `unusable` (unreadable, damaged). */
export class SnapshotFileError extends Error {
  constructor(readonly kind: 'missing' | 'unusable', message: string) {
    super(message);
    this.name = 'SnapshotFileError';
  }
}

/** A snapshot file open for reading: its descriptor, and its path for messages. */
export interface OpenSnapshotFile {
  fd: number;
  path: string;
}

/** A line-framed snapshot as opened: its header, its summary and where its memory lines are. */
export interface FramedSnapshot {
  header: SnapshotHeaderT;
  summary: SnapshotCounts;
  /** Byte offsets of the first memory line and of the summary line (the end of the memories). */
  memoriesStart: number;
  memoriesEnd: number;
  /** Chunks are read through the descriptor checked, so only an in-place truncation can change it. */
  size: number;
}

/** The header line is short (names, ids); a first line longer than this is an unframed file. */
const HEADER_MAX_BYTES = 64 * 1024;
/** The summary line is shorter still; it must lie within the file's last bytes. */
const TAIL_BYTES = 4096;
/** Bytes read per system call. */
const BLOCK_BYTES = 1 << 20;
/**
 * One memory's line; a longer one is damage, not a memory, refused before a pool thread buffers
 * it (a NUL-filled file has no line breaks). The longest a memory can be: its content (at most
 * MAX_CONTENT_LENGTH UTF-16 units, 6 bytes each when JSON escapes them as \uXXXX: 600 KB), its
 * vector (MAX_EMBEDDING_DIMENSIONS numbers of at most 25 characters: 200 KB), its links (one per
 * entity named in the content: well under 1 MB) — under 2 MiB; 8 MiB leaves a margin.
 */
export const MAX_LINE_BYTES = Math.max(8 << 20, 4 * (MAX_CONTENT_LENGTH * 6 + MAX_EMBEDDING_DIMENSIONS * 25 + (1 << 20)));

/** The header and summary of a line-framed snapshot; null when the file is not framed (older). */
export function openFramed({ fd, path }: OpenSnapshotFile, expectedId: string): FramedSnapshot | null {
  return guarded(path, () => {
    const { size } = fstatSync(fd);
    const head = Buffer.alloc(Math.min(size, HEADER_MAX_BYTES));
    const headBytes = readSync(fd, head, 0, head.length, 0);
    const newline = head.subarray(0, headBytes).indexOf(10);
    if (newline === -1) return null;
    const first = head.toString('utf8', 0, newline);
    if (!first.endsWith('"memories":[')) return null;
    const { memories: _none, ...header } = parsed(path, 'header', () => validators.snapshot.parse(JSON.parse(`${first}]}`)));
    if (SNAPSHOT_ID.test(expectedId) && header.snapshot_id !== expectedId) {
      throw unusable(path, `it names itself ${header.snapshot_id}`);
    }
    const tail = Buffer.alloc(Math.min(size, TAIL_BYTES));
    readSync(fd, tail, 0, tail.length, size - tail.length);
    let end = tail.length;
    while (end > 0 && tail[end - 1] === 10) end--;
    const lineStart = tail.lastIndexOf(10, end - 1) + 1;
    const memoriesEnd = size - tail.length + lineStart;
    if (lineStart === 0 || memoriesEnd < newline + 1) throw unusable(path, 'its summary line is missing (a cut-short file)');
    const summaryLine = tail.toString('utf8', lineStart, end);
    const summary = parsed(path, 'summary line', () =>
      validators.snapshotSummary.parse((JSON.parse(`{"memories":[${summaryLine}`) as { summary?: unknown }).summary));
    return { header, summary, memoriesStart: newline + 1, memoriesEnd, size };
  });
}

/**
 * Up to `max.memories` memories (or about `max.bytes` of their text) from byte offset `from`,
 * each parsed and checked; `next` is where the following chunk starts (memoriesEnd: no more).
 */
export function readMemories(
  { fd, path }: OpenSnapshotFile,
  framed: FramedSnapshot,
  from: number,
  max: { memories: number; bytes: number },
): { memories: SnapshotMemoryT[]; next: number } {
  return guarded(path, () => {
    if (fstatSync(fd).size !== framed.size) throw unusable(path, 'the file changed size while it was being read');
    const memories: SnapshotMemoryT[] = [];
    let next = from;
    for (const line of lines(fd, path, from, framed.memoriesEnd)) {
      memories.push(memoryOf(path, line.text, line.start, line.start === framed.memoriesStart));
      next = line.end;
      if (memories.length >= max.memories || next - from >= max.bytes) break;
    }
    return { memories, next };
  });
}

/** Reads every memory line once (a chunk at a time) and checks the summary's counts against them. */
export function checkFramed(file: OpenSnapshotFile, framed: FramedSnapshot, max: { memories: number; bytes: number }): void {
  const { path } = file;
  const seen: SnapshotCounts = { memory_count: 0, counts: { episodic: 0, semantic: 0, procedural: 0 }, vectors: 0 };
  for (let from = framed.memoriesStart; from < framed.memoriesEnd;) {
    const chunk = readMemories(file, framed, from, max);
    for (const memory of chunk.memories) {
      seen.memory_count++;
      seen.counts[memory.memory_type]++;
      if (memory.embedding !== null) seen.vectors++;
    }
    from = chunk.next;
  }
  const { summary } = framed;
  const agrees = seen.memory_count === summary.memory_count && seen.vectors === summary.vectors &&
    (['episodic', 'semantic', 'procedural'] as const).every((type) => seen.counts[type] === summary.counts[type]);
  if (!agrees) {
    throw unusable(path, `its summary says ${JSON.stringify(framed.summary)} but its lines hold ${JSON.stringify(seen)}`);
  }
}

/** One memory line: `{…}` first, `,{…}` after. */
function memoryOf(path: string, text: string, at: number, first: boolean): SnapshotMemoryT {
  if (!first && !text.startsWith(',')) throw unusable(path, `the line at byte ${at} is not a memory`);
  return parsed(path, `the memory at byte ${at}`, () => validators.snapshotMemory.parse(JSON.parse(first ? text : text.slice(1))));
}

/** The lines between byte offsets `start` and `end` (which must end a line), with their offsets. */
function* lines(fd: number, path: string, start: number, end: number): Generator<{ text: string; start: number; end: number }> {
  const block = Buffer.allocUnsafe(BLOCK_BYTES);
  let partial: Buffer[] = [];
  let partialBytes = 0;
  let lineStart = start;
  for (let position = start; position < end;) {
    const read = readSync(fd, block, 0, Math.min(BLOCK_BYTES, end - position), position);
    if (read === 0) break;
    const bytes = block.subarray(0, read);
    let from = 0;
    for (let newline = bytes.indexOf(10); newline !== -1; newline = bytes.indexOf(10, from)) {
      const rest = bytes.subarray(from, newline);
      const text = partial.length === 0 ? rest.toString('utf8') : Buffer.concat([...partial, rest]).toString('utf8');
      partial = [];
      partialBytes = 0;
      const lineEnd = position + newline + 1;
      yield { text, start: lineStart, end: lineEnd };
      lineStart = lineEnd;
      from = newline + 1;
    }
    // The block is reused: keep a copy of a line it cut.
    partialBytes += read - from;
    if (partialBytes > MAX_LINE_BYTES) throw unusable(path, `the line at byte ${lineStart} is longer than ${MAX_LINE_BYTES} bytes`);
    if (from < read) partial.push(Buffer.from(bytes.subarray(from)));
    position += read;
  }
  if (partialBytes > 0 || lineStart !== end) throw unusable(path, `the memory lines end early, at byte ${lineStart}`);
}

/** The file open for reading; the caller closes it (closeSync(file.fd)). */
export function openSnapshotFile(path: string): OpenSnapshotFile {
  try {
    return { fd: openSync(path, 'r'), path };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SnapshotFileError('missing', `snapshot not found: ${path}`);
    throw new SnapshotFileError('unusable', `cannot read snapshot ${path}: ${(error as Error).message}`);
  }
}

/** `work` on the file opened for it alone, then closed. */
export function withSnapshotFile<T>(path: string, work: (file: OpenSnapshotFile) => T): T {
  const file = openSnapshotFile(path);
  try {
    return work(file);
  } finally {
    closeSync(file.fd);
  }
}

/** Any failure reading the file (an I/O error, not only damage) as the file being unusable. */
function guarded<T>(path: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof SnapshotFileError) throw error;
    throw new SnapshotFileError('unusable', `cannot read snapshot ${path}: ${(error as Error).message}`);
  }
}

/** A JSON or schema failure in one part of the file, as the file's damage. */
function parsed<T>(path: string, part: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw unusable(path, `${part}: ${(error as Error).message}`);
  }
}

function unusable(path: string, why: string): SnapshotFileError {
  return new SnapshotFileError('unusable', `snapshot ${path} is corrupt: ${why}`);
}
