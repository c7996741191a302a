// Finding, reading and checking deletion snapshots in `snapshots/` beside the database. Used by
// the offline CLI (`snapshots`, `restore`) and by the service's pool (GET /v1/snapshots, online
// restore), so both list and refuse the same files for the same reasons.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { snapshotPath } from './snapshot-file.js';
import { validators, type SnapshotFileT } from './file-formats.js';

export const SNAPSHOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Why a snapshot cannot be used: `missing` (no such file) or `unusable` (unreadable, damaged). */
export class SnapshotFileError extends Error {
  constructor(readonly kind: 'missing' | 'unusable', message: string) {
    super(message);
    this.name = 'SnapshotFileError';
  }
}

/** The parsed, checked snapshot `<dir>/<id>.json`. */
export function readSnapshotById(dir: string, id: string): SnapshotFileT {
  return readSnapshot(snapshotPath(dir, id), id);
}

/** The parsed, checked snapshot; a missing, unreadable or damaged file is a SnapshotFileError. */
export function readSnapshot(path: string, expectedId: string): SnapshotFileT {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
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

/** Every snapshot in the folder, oldest first; damaged files are listed with their problem. */
export function listSnapshots(dir: string): SnapshotSummary[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new SnapshotFileError('unusable', `cannot list snapshots in ${dir}: ${(error as Error).message}`);
  }
  const summaries = names.map((name): SnapshotSummary => {
    const id = basename(name, '.json');
    try {
      const snapshot = readSnapshot(join(dir, name), id);
      const counts: Record<string, number> = { episodic: 0, semantic: 0, procedural: 0 };
      for (const memory of snapshot.memories) counts[memory.memory_type]++;
      return {
        snapshot_id: snapshot.snapshot_id, captured_at: snapshot.captured_at, namespace: snapshot.namespace,
        entity: snapshot.entity.name, memory_count: snapshot.memories.length, counts,
        vectors: snapshot.memories.filter((m) => m.embedding !== null).length, problem: null,
      };
    } catch (error) {
      return {
        snapshot_id: id, captured_at: null, namespace: null, entity: null, memory_count: 0, counts: {}, vectors: 0,
        problem: (error as Error).message,
      };
    }
  });
  return summaries.sort((a, b) => (a.captured_at ?? '').localeCompare(b.captured_at ?? '') || a.snapshot_id.localeCompare(b.snapshot_id));
}
