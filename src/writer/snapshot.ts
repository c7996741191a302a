// Deletion snapshots: every row a delete removes is written to
// <db folder>/snapshots/<snapshot_id>.json, with mode 0600, and fsynced before the delete
// commits. If any step fails the caller aborts the delete, so nothing is ever removed
// without a recovery copy on disk.
import { closeSync, fsyncSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from '../shared/errors.js';

export const SNAPSHOT_FORMAT_VERSION = 1;

export interface SnapshotFile {
  format_version: number;
  snapshot_id: string;
  captured_at: string;
  namespace: string;
  entity: { id: string; name: string; kind: string };
  embedder: string | null;
  memories: Record<string, unknown>[];
}

export interface WrittenSnapshot {
  path: string;
  ownerOnly: boolean;
}

export function snapshotPath(dir: string, snapshotId: string): string {
  return join(dir, `${snapshotId}.json`);
}

export function writeSnapshot(dir: string, snapshot: SnapshotFile): WrittenSnapshot {
  const path = snapshotPath(dir, snapshot.snapshot_id);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // 'wx': never overwrite an existing snapshot.
    const fd = openSync(path, 'wx', 0o600);
    try {
      writeSync(fd, JSON.stringify(snapshot));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // The directory entry must be durable too, or a crash could lose the file.
    const dirFd = openSync(dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
    return { path, ownerOnly: (statSync(path).mode & 0o077) === 0 };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ServiceError('SNAPSHOT_FAILED', `deletion aborted: could not write the recovery snapshot (${reason})`);
  }
}
