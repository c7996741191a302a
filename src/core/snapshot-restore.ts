// POST /v1/snapshots/{snapshot_id}/restore, main-thread side: the online form of
// `memory-runtime restore`. A pool thread (requested lane) first checks the whole file a chunk at
// a time — a damaged file is refused before anything is written — then the snapshot is streamed:
// the pool reads and parses a bounded chunk of memory lines (RESTORE_CHUNK), reading the next
// one while the writer puts this one back a time-bounded command at a time (WriteStore.restoreRows,
// the same 40 ms bound as a delete's chunks), so other writes commit between commands. Memory
// held is two chunks, whatever the file's size; an older, unframed file is parsed whole.
// A restore takes its turn on arrival, before it reads anything: one restore runs at a time
// (others wait, bounded: 409 RESTORE_BUSY), and no delete of any entity runs beside it — a
// snapshot of X holds memories Y took part in (DeleteRestoreTurns).
// Idempotent: memories already present are counted, not written, so a second restore — or one
// that a crash cut short, repeated — brings back exactly what is missing. A restored memory is
// recallable as soon as its chunk commits (FTS is indexed in the write); one the snapshot
// holds without a vector is embedded by the backfill.
import type { Config } from '../shared/config.js';
import { closeSync } from 'node:fs';
import { fail, ServiceError } from '../shared/errors.js';
import type { SnapshotHeaderT } from '../shared/file-formats.js';
import type { Logger } from '../shared/logger.js';
import type { RestoreResult } from '../shared/schemas.js';
import { headerOf, type CheckedSnapshot, type StoredSnapshot } from '../shared/snapshot-files.js';
import type { SnapshotMemoryT } from '../shared/snapshot-reader.js';
import type { ReadPool } from './pool/read-pool.js';
import type { DeleteRestoreTurns } from './take-turns.js';
import { SnapshotProblems } from './snapshot-problems.js';
import type { WriterClient } from './writer-client.js';
import type { CommitTrail } from './commit-trail.js';
import type { NamespaceScope } from '../shared/namespace-name.js';

/** Most memories sent per writer command; the writer may handle fewer within its time budget. */
const MAX_SEND = 500;
/** Memories sent in the first command, before the writer has shown how many fit its budget. */
const FIRST_SEND = 100;

export class SnapshotRestore {
  /** What full checks found wrong in files the listing calls restorable. */
  readonly problems: SnapshotProblems;

  constructor(
    private readonly config: Config,
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    /** The embedding backfill (core/jobs/embedding-backfill.ts), told when restored rows wait for vectors. */
    private readonly backfill: { poke(): void },
    private readonly log: Logger,
    private readonly turns: DeleteRestoreTurns,
  ) {
    this.problems = new SnapshotProblems(config.snapshotDir);
  }

  /** `trail` is told the position of each writer command's commit (the answer's Memory-Position). */
  restore(scope: NamespaceScope, snapshotId: string, trail?: CommitTrail): Promise<RestoreResult> {
    // A UUID is case-insensitive (the route's pattern takes either case); snapshot files are named in lower case.
    return this.turns.restore(scope.namespace, () => this.restoreNow(scope, snapshotId.toLowerCase(), trail));
  }

  private async restoreNow(scope: NamespaceScope, snapshotId: string, trail: CommitTrail | undefined): Promise<RestoreResult> {
    const started = performance.now();
    const { namespace } = scope;
    const checked = await this.pool.run({ op: 'checkSnapshot', namespace, snapshotId }).catch(async (error: unknown) => {
      if (error instanceof ServiceError && error.code === 'SNAPSHOT_UNUSABLE') {
        await this.problems.record(snapshotId, error.message);
        // An unusable snapshot's namespace cannot be trusted (its header may be what is broken):
        // a bound key hears what it hears of an unknown id, so it learns nothing of another
        // namespace's snapshots. Operators get the problem (and GET /v1/snapshots lists it).
        if (!scope.operator) throw fail.snapshotNotFound(snapshotId);
      }
      throw error;
    });
    const header = 'stored' in checked ? checked.stored : headerOf(checked);
    // A restore writes only the request's namespace; the CLI's --force is the way across. A key
    // bound to a namespace is not told another namespace's snapshot exists, nor its name.
    if (header.namespace !== namespace) {
      if (!scope.operator) {
        if (!('stored' in checked) && checked.fd !== null) closeSync(checked.fd);
        throw fail.snapshotNotFound(snapshotId);
      }
      throw fail.snapshotOtherNamespace(snapshotId, header.namespace, namespace);
    }
    let result: Awaited<ReturnType<SnapshotRestore['apply']>>;
    try {
      result = await this.apply(header, this.chunks(header.namespace, snapshotId, checked), trail);
    } finally {
      // The check opened the file once for the whole restore (chunks are read through it).
      if (!('stored' in checked) && checked.fd !== null) closeSync(checked.fd);
    }
    this.log.info({ snapshotId, ...result, ms: Math.round(performance.now() - started) }, 'snapshot restored');
    return {
      snapshot_id: header.snapshot_id, namespace: header.namespace, entity: header.entity.name,
      restored_count: result.restored, already_present_count: result.present,
    };
  }

  /**
   * The snapshot's memories a chunk at a time: read by the pool from a framed file or from the
   * snapshot tables (PostgreSQL, by memory rowid), sliced from an older file.
   */
  private chunks(namespace: string, snapshotId: string, checked: CheckedSnapshot | StoredSnapshot): AsyncGenerator<SnapshotMemoryT[]> {
    if ('stored' in checked) {
      return this.readAhead<number>(0, (after) => this.pool.run({ op: 'readStoredSnapshotMemories', namespace, snapshotId, after }));
    }
    if (checked.whole) return sliced(checked.whole.memories);
    const { framed, fd } = checked;
    return this.readAhead<number>(framed.memoriesStart < framed.memoriesEnd ? framed.memoriesStart : null, async (from) => {
      const chunk = await this.pool.run({ op: 'readSnapshotMemories', namespace, snapshotId, fd, framed, from });
      return { memories: chunk.memories, next: chunk.next < framed.memoriesEnd ? chunk.next : null };
    });
  }

  /** Chunks from `read`, starting at `first` (null: none): the pool reads the next while the writer puts this one back. */
  private async *readAhead<C>(first: C | null, read: (from: C) => Promise<{ memories: SnapshotMemoryT[]; next: C | null }>): AsyncGenerator<SnapshotMemoryT[]> {
    const start = (from: C) => {
      const chunk = read(from);
      // Awaited below; this copy keeps a read left pending by a failed restore from going unhandled.
      chunk.catch(() => {});
      return chunk;
    };
    let pending = first === null ? null : start(first);
    try {
      while (pending) {
        const chunk = await pending;
        pending = chunk.next === null ? null : start(chunk.next);
        yield chunk.memories;
      }
    } finally {
      // A read left pending by a failed restore ends before the caller closes the descriptor.
      await pending?.catch(() => {});
    }
  }

  private async apply(header: SnapshotHeaderT, chunks: AsyncIterable<SnapshotMemoryT[]>, trail: CommitTrail | undefined) {
    let restored = 0;
    let present = 0;
    let commands = 0;
    const send = async (memories: SnapshotMemoryT[]): Promise<number> => {
      const step = await this.writer.send(header.namespace, { type: 'restoreRows', snapshot: header, memories }, trail);
      restored += step.restored;
      present += step.present;
      commands++;
      if (step.restored > 0) this.backfill.poke();
      return step.processed;
    };
    let size = FIRST_SEND;
    try {
      for await (const chunk of chunks) {
        for (let next = 0; next < chunk.length;) {
          const sent = chunk.slice(next, next + size);
          const processed = Math.max(await send(sent), 1);
          next += processed;
          // Send about what the writer handles within its budget: memories it leaves are cloned
          // to it again in the next command.
          size = processed < sent.length ? processed : Math.min(size * 2, MAX_SEND);
        }
      }
    } catch (error) {
      // The file failed after some of it committed: not "nothing was restored" (SNAPSHOT_UNUSABLE).
      const fileFailed = error instanceof ServiceError && (error.code === 'SNAPSHOT_UNUSABLE' || error.code === 'SNAPSHOT_NOT_FOUND');
      if (commands > 0 && fileFailed) throw fail.restoreInterrupted(header.snapshot_id, restored, error.message);
      throw error;
    }
    // An empty snapshot still brings its entity back, as the offline restore does.
    if (commands === 0) await send([]);
    return { restored, present, commands };
  }
}

/** An older, unframed file's memories (parsed whole by the check) in chunks of MAX_SEND. */
async function* sliced(memories: SnapshotMemoryT[]): AsyncGenerator<SnapshotMemoryT[]> {
  for (let i = 0; i < memories.length; i += MAX_SEND) yield memories.slice(i, i + MAX_SEND);
}
