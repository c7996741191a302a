// The CLI's view of deletion snapshots: ids or paths on the command line, and the shared
// readers (shared/snapshot-files.ts) with their failures turned into one-line CliErrors.
import { basename } from 'node:path';
import { snapshotPath } from '../../shared/snapshot-file.js';
import * as files from '../../shared/snapshot-files.js';
import type { SnapshotHeaderT } from '../../shared/file-formats.js';
import type { SnapshotMemoryT } from '../../shared/snapshot-reader.js';
import { CliError, UsageError } from '../terminal/args.js';

export type { SnapshotSummary } from '../../shared/snapshot-files.js';

/** A snapshot id names `<dir>/<id>.json`; anything with a slash or `.json` is taken as a path. */
export function resolveSnapshot(dir: string, idOrPath: string): { id: string; path: string } {
  if (idOrPath.includes('/') || idOrPath.endsWith('.json')) return { id: basename(idOrPath, '.json'), path: idOrPath };
  if (!files.SNAPSHOT_ID.test(idOrPath)) throw new UsageError(`'${idOrPath}' is not a snapshot id (a UUID) or a path to a snapshot file`);
  // A UUID is case-insensitive; snapshot files are named in lower case.
  const id = idOrPath.toLowerCase();
  return { id, path: snapshotPath(dir, id) };
}

/**
 * The snapshot checked line by line (nothing is held but its header) and its memories, read again
 * a chunk at a time through the same open file; the caller calls close() when done.
 */
export function openSnapshot(path: string, expectedId: string): { header: SnapshotHeaderT; memories: Iterable<SnapshotMemoryT>; close: () => void } {
  const checked = asCliError(() => files.checkSnapshot(path, expectedId));
  const memories = files.memoriesOf(path, checked);
  return {
    header: files.headerOf(checked),
    memories: { [Symbol.iterator]: () => asCliErrors(memories) },
    close: () => files.closeChecked(checked),
  };
}

function* asCliErrors<T>(items: Iterator<T>): Generator<T> {
  for (;;) {
    const next = asCliError(() => items.next());
    if (next.done) return;
    yield next.value;
  }
}

export function listSnapshots(dir: string): files.SnapshotSummary[] {
  return asCliError(() => files.listSnapshots(dir));
}

function asCliError<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof files.SnapshotFileError) throw new CliError(error.message);
    throw error;
  }
}
