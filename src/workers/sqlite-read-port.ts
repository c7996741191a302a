// The read port over the SQLite file: the statements the pool has always run (ReadStore, the
// recall signals, the IVF cells), unchanged and still synchronous inside. Each method settles
// at once; a recall's snapshot is one read transaction on this thread's read-only connection.
import type { Db } from '../shared/db.js';
import type { Config } from '../shared/config.js';
import { listSnapshots, readSnapshotById } from '../shared/snapshot-files.js';
import { DeletionSnapshots } from './deletion-snapshot.js';
import { EntityMatcher } from './entity-mentions.js';
import { VectorCells } from './ivf/cells.js';
import { VectorIndexMaintenance } from './ivf/upkeep.js';
import { MEMORY_COLUMNS, ReadStore, type MemoryRow } from './read-store.js';
import type { ReadPort, RecallReads } from './read-port.js';
import { Bm25Signal } from './recall/bm25-signal.js';
import { TurnNeighbours } from './recall/conversation.js';
import { EntityLinks } from './recall/entity-prior.js';
import type { CandidateFilter, CandidateRow, RecallContext } from './recall/signals.js';
import { VectorSignal } from './recall/vector-signal.js';

export interface SqliteReadOptions {
  /** Cosine similarity from which a vector match counts on its own (embedder calibration). */
  minSimilarity: number;
  /** IVF cells scanned per query; 0 or absent = chosen from the cell count. */
  vectorProbes?: number;
  /** Where deletion snapshots live (the snapshot folder, the namespace's name); needed only by the snapshot reads. */
  config?: Config;
}

export class SqliteReadPort implements ReadPort {
  readonly namespace: string;
  private readonly store: ReadStore;
  private readonly reads: RecallReads;
  private readonly cells: VectorCells;
  private readonly vectorIndex: VectorIndexMaintenance;
  private readonly deletions: DeletionSnapshots | null;
  private readonly snapshotDir: string | null;
  /** Recalls on this thread take turns: a connection has one read transaction at a time. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: Db, namespaceId: number, namespace: string, options: SqliteReadOptions) {
    this.namespace = namespace;
    this.store = new ReadStore(db, namespaceId, namespace);
    this.cells = new VectorCells(db, namespaceId);
    this.vectorIndex = new VectorIndexMaintenance(db, namespaceId, this.cells);
    this.reads = sqliteRecallReads(db, this.store, namespaceId, options);
    this.deletions = options.config ? new DeletionSnapshots(db, namespaceId, options.config) : null;
    this.snapshotDir = options.config?.snapshotDir ?? null;
  }

  snapshot<T>(work: (reads: RecallReads) => Promise<T>): Promise<T> {
    const run = async () => {
      this.db.exec('BEGIN');
      try {
        return await work(this.reads);
      } finally {
        this.db.exec('COMMIT');
      }
    };
    const result = this.turn.then(run, run);
    this.turn = result.catch(() => {});
    return result;
  }

  async entity(name: string) { return this.store.entity(name); }
  async entitiesNamedIn(text: string) { return this.reads.entitiesNamedIn(text); }
  async entityMemories(entityId: string, limit: number) { return this.store.entityMemories(entityId, limit); } // lazy: the caller stops at its budget
  async stats() { return this.store.stats(); }
  async entities(query: Parameters<ReadStore['entities']>[0]) { return this.store.entities(query); }
  async episode(id: string) { return this.store.episode(id); }
  async episodeStarts(ids: string[]) { return this.store.episodeStarts(ids); }
  async transcript(episodeId: string) { return this.store.transcript(episodeId); }
  async participants(episodeId: string) { return this.store.participants(episodeId); }
  async unembedded(limit: number) { return this.store.unembedded(limit); }
  async unembeddedCount() { return this.store.unembeddedCount(); }
  async cellFor(vector: Float32Array) { return this.cells.assign(vector); }
  async vectorIndexStatus() { return this.vectorIndex.status(); }
  async trainVectorIndex() { return this.vectorIndex.train(); }
  async staleVectorMoves(limit: number) { return this.vectorIndex.staleMoves(limit); }
  // Snapshots are files beside the database (src/shared/snapshot-files.ts), written from one read transaction.
  async listSnapshots() { return listSnapshots(this.configured(this.snapshotDir)); }
  async readSnapshot(snapshotId: string) { return readSnapshotById(this.configured(this.snapshotDir), snapshotId); }
  async snapshotEntity(entityName: string, maxRowid: number) { return this.configured(this.deletions).write(entityName, maxRowid); }

  private configured<T>(value: T | null): T {
    if (value === null) throw new Error('SqliteReadPort: snapshot reads need options.config');
    return value;
  }
}

/** A recall's reads: the signals' and ranking's statements, prepared once per thread. */
function sqliteRecallReads(db: Db, store: ReadStore, namespaceId: number, options: SqliteReadOptions): RecallReads {
  const bm25 = new Bm25Signal(db, namespaceId);
  const vector = new VectorSignal(db, namespaceId, options.minSimilarity, new VectorCells(db, namespaceId, options.vectorProbes));
  const neighbours = new TurnNeighbours(db, namespaceId);
  const links = new EntityLinks(db, namespaceId);
  const matcher = new EntityMatcher(db, namespaceId);
  const positions = db.prepare<[string], CandidateRow>(`SELECT m.rowid AS rowid, m.memory_type, m.episode_id, m.seq,
    m.confidence, m.created_at FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?))`);
  const rows = db.prepare<[string], MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?))`);
  return {
    entity: async (name: string) => store.entity(name),
    entitiesNamedIn: async (text: string) => matcher.find(text),
    lexical: async (ctx: RecallContext) => bm25.retrieve(ctx),
    nearest: async (ctx: RecallContext) => vector.retrieve(ctx),
    similarities: async (queryVector: Float32Array, rowids: number[]) => vector.similarities(queryVector, rowids),
    adjacent: async (rowids: number[], filter: CandidateFilter) => neighbours.adjacent(rowids, filter),
    membersOfFew: async (entityIds: string[], depth: number, filter: CandidateFilter) => links.membersOfFew(entityIds, depth, filter),
    linked: async (rowids: number[], entityIds: string[]) => links.linked(rowids, entityIds),
    positions: async (rowids: number[]) => positions.all(JSON.stringify(rowids)),
    rows: async (rowids: number[]) => rows.all(JSON.stringify(rowids)),
  };
}
