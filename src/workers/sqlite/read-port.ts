// The read port over the SQLite file: the statements the pool has always run (ReadStore, the
// recall signals, the IVF cells), unchanged and still synchronous inside. Each method settles
// at once; a recall's snapshot is one read transaction on this thread's read-only connection.
import type { Db } from '../../shared/db.js';
import { prepareOnce } from '../../shared/connection-statements.js';
import type { Config } from '../../shared/config.js';
import { checkedHeaderById, listSnapshots, memoriesAfterById, readSnapshotById } from '../../shared/snapshot-files.js';
import { SqliteConsolidationReads } from './consolidation.js';
import { DeletionSnapshots } from './deletion-snapshot.js';
import { EntityMatcher } from './entity-matcher.js';
import { VectorCells } from './ivf-cells.js';
import { VectorIndexMaintenance } from './ivf-upkeep.js';
import { MEMORY_COLUMNS, ReadStore } from './read-store.js';
import type { MemoryRow } from '../port/rows.js';
import type { ReadPort, RecallReads } from '../port/read-port.js';
import { Bm25Signal } from './lexical.js';
import { TurnNeighbours } from './turn-neighbours.js';
import { EntityLinks } from './entity-links.js';
import type { CandidateFilter, CandidateRow, RecallContext } from '../port/candidates.js';
import { VectorSignal } from './vectors.js';
import { NamespaceVectorCodes, refreshVectorCodes, type SharedCodesHandle } from './vector-codes.js';
import { threadId } from 'node:worker_threads';

export interface SqliteReadOptions {
  /** Cosine similarity from which a vector match counts on its own (embedder calibration). */
  minSimilarity: number;
  /** IVF cells scanned per query; 0 or absent = chosen from the cell count. */
  vectorProbes?: number;
  /** Recall scans the shared vector codes a task hands over (false: vec0 only). */
  vectorCodes?: boolean;
  /** Where deletion snapshots live (the snapshot folder, the namespace's name); needed only by the snapshot reads. */
  config?: Config;
  /** Shared by every port on the same connection (one per namespace): they take turns together. */
  turns?: ConnectionTurns;
}

/** The turn order of one read-only connection (see SqliteReadPort.turn). */
export interface ConnectionTurns {
  turn: Promise<unknown>;
}

export class SqliteReadPort implements ReadPort {
  readonly namespace: string;
  private readonly store: ReadStore;
  private readonly reads: RecallReads;
  private readonly cells: VectorCells;
  private readonly vectorIndex: VectorIndexMaintenance;
  private readonly namespaceId: number;
  private readonly consolidation: SqliteConsolidationReads;
  private readonly deletions: DeletionSnapshots | null;
  private readonly snapshotDir: string | null;
  /**
   * Everything read on this connection takes turns, recalls and single lookups alike. Piscina
   * runs several tasks per thread, and a recall's snapshot is a read transaction held across
   * awaits: a lookup run in between would read inside it — an older view than the write the
   * client was just told about — and a statement left open across an await makes COMMIT fail.
   */
  private readonly turns: ConnectionTurns;

  constructor(private readonly db: Db, namespaceId: number, namespace: string, options: SqliteReadOptions) {
    this.namespace = namespace;
    this.store = new ReadStore(db, namespaceId, namespace);
    this.cells = new VectorCells(db, namespaceId);
    this.vectorIndex = new VectorIndexMaintenance(db, namespaceId, this.cells);
    this.consolidation = new SqliteConsolidationReads(db, namespaceId);
    this.namespaceId = namespaceId;
    const codes = options.vectorCodes ? new NamespaceVectorCodes(db, new VectorCells(db, namespaceId, options.vectorProbes)) : null;
    this.reads = sqliteRecallReads(db, this.store, namespaceId, options, codes);
    this.deletions = options.config ? new DeletionSnapshots(db, namespaceId, options.config) : null;
    this.snapshotDir = options.config?.snapshotDir ?? null;
    this.turns = options.turns ?? { turn: Promise.resolve() };
  }

  snapshot<T>(work: (reads: RecallReads) => Promise<T>): Promise<T> {
    return this.inTurn(async () => {
      this.db.exec('BEGIN');
      try {
        return await work(this.reads);
      } finally {
        this.endTransaction();
      }
    });
  }

  entity(name: string) { return this.inTurn(() => this.store.entity(name)); }
  entitiesNamedIn(text: string) { return this.inTurn(() => this.reads.entitiesNamedIn(text)); }
  entityMemories(entityId: string, limit: number, budgetBytes: number, includeSuperseded?: boolean) {
    return this.inTurn(() => this.store.entityMemories(entityId, limit, budgetBytes, includeSuperseded));
  }
  stats() { return this.inTurn(() => this.store.stats()); }
  memoryHistory(id: string, budgetBytes: number) { return this.inTurn(() => this.store.memoryHistory(id, budgetBytes)); }
  entities(query: Parameters<ReadStore['entities']>[0]) { return this.inTurn(() => this.store.entities(query)); }
  episodes(query: Parameters<ReadStore['episodes']>[0]) { return this.inTurn(() => this.store.episodes(query)); }
  episode(id: string) { return this.inTurn(() => this.store.episode(id)); }
  episodeStarts(ids: string[]) { return this.inTurn(() => this.store.episodeStarts(ids)); }
  recentTranscript(episodeId: string, budgetChars: number) { return this.inTurn(() => this.store.recentTranscript(episodeId, budgetChars)); }
  participants(episodeId: string) { return this.inTurn(() => this.store.participants(episodeId)); }
  unembedded(limit: number, newestFirst?: boolean) { return this.inTurn(() => this.store.unembedded(limit, newestFirst)); }
  unembeddedCount() { return this.inTurn(() => this.store.unembeddedCount()); }
  cellFor(vector: Float32Array) { return this.inTurn(() => this.cells.assign(vector)); }
  vectorIndexStatus() { return this.inTurn(() => this.vectorIndex.status()); }
  trainVectorIndex() { return this.inTurn(() => this.vectorIndex.train()); }
  staleVectorMoves(limit: number) { return this.inTurn(() => this.vectorIndex.staleMoves(limit)); }
  refreshVectorCodes(previous: SharedCodesHandle | null, limitBytes: number) {
    return this.inTurn(() => refreshVectorCodes(this.db, this.namespaceId, this.cells, previous, limitBytes, threadId));
  }
  promotionWatermark() { return this.inTurn(() => this.consolidation.promotionWatermark()); }
  newestEpisodicRowid() { return this.inTurn(() => this.consolidation.newestEpisodicRowid()); }
  promotionCandidates(watermark: number, perSubject: number) { return this.inTurn(() => this.consolidation.promotionCandidates(watermark, perSubject)); }
  decayCandidates(now: number, archiveFactor: number) { return this.inTurn(() => this.consolidation.decayCandidates(now, archiveFactor)); }
  // Snapshots are files beside the database (src/shared/snapshot-files.ts), written from one read transaction.
  listSnapshots() { return this.inTurn(() => listSnapshots(this.configured(this.snapshotDir))); }
  readSnapshot(snapshotId: string) { return this.inTurn(() => readSnapshotById(this.configured(this.snapshotDir), snapshotId)); }
  checkSnapshot(snapshotId: string) { return this.inTurn(() => checkedHeaderById(this.configured(this.snapshotDir), snapshotId)); }
  snapshotMemories(snapshotId: string, after: number) { return this.inTurn(() => memoriesAfterById(this.configured(this.snapshotDir), snapshotId, after)); }
  snapshotEntity(entityName: string, maxRowid: number) { return this.inTurn(() => this.configured(this.deletions).write(entityName, maxRowid)); }
  snapshotMemory(memoryId: string) { return this.inTurn(() => this.configured(this.deletions).writeMemory(memoryId)); }

  /** Runs `read` once every read queued before it has settled, on a connection outside any transaction. */
  private inTurn<T>(read: () => T | Promise<T>): Promise<T> {
    const run = async () => {
      if (this.db.inTransaction) this.endTransaction(); // one a failed COMMIT could not end
      return read();
    };
    const result = this.turns.turn.then(run, run);
    this.turns.turn = result.catch(() => {});
    return result;
  }

  /**
   * Ends the read transaction, whatever happens: a read transaction left open would pin its
   * snapshot (the WAL could never be checkpointed past it) and every later BEGIN would fail.
   * COMMIT fails only while a statement is still stepping; ROLLBACK is then tried, and if that
   * fails too the next turn ends the transaction before it reads. The reads themselves stand.
   */
  private endTransaction(): void {
    try {
      this.db.exec('COMMIT');
    } catch {
      try { if (this.db.inTransaction) this.db.exec('ROLLBACK'); } catch { /* the next turn retries */ }
    }
  }

  private configured<T>(value: T | null): T {
    if (value === null) throw new Error('SqliteReadPort: snapshot reads need options.config');
    return value;
  }
}

/** A recall's reads: the signals' and ranking's statements, prepared once per thread. */
function sqliteRecallReads(db: Db, store: ReadStore, namespaceId: number, options: SqliteReadOptions, codes: NamespaceVectorCodes | null): RecallReads {
  const bm25 = new Bm25Signal(db, namespaceId);
  const cells = new VectorCells(db, namespaceId, options.vectorProbes);
  const vector = new VectorSignal(db, namespaceId, options.minSimilarity, cells, codes);
  const neighbours = new TurnNeighbours(db, namespaceId);
  const links = new EntityLinks(db, namespaceId);
  const matcher = new EntityMatcher(db, namespaceId);
  const positions = prepareOnce<[string], CandidateRow>(db, `SELECT m.rowid AS rowid, m.memory_type, m.episode_id, m.seq,
    m.confidence, m.created_at FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?))`);
  const rows = prepareOnce<[string], MemoryRow>(db,
    `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?))`);
  return {
    entity: async (name: string) => store.entity(name),
    entitiesNamedIn: async (text: string) => matcher.find(text),
    lexical: async (ctx: RecallContext) => bm25.retrieve(ctx),
    nearest: async (ctx: RecallContext) => vector.retrieve(ctx),
    similarities: async (queryVector: Float32Array, rowids: number[]) => vector.similarities(queryVector, rowids),
    vectors: async (rowids: number[]) => vector.vectors(rowids),
    adjacent: async (rowids: number[], filter: CandidateFilter, reach?: number) => neighbours.adjacent(rowids, filter, reach),
    membersOfFew: async (entityIds: string[], depth: number, filter: CandidateFilter) => links.membersOfFew(entityIds, depth, filter),
    linked: async (rowids: number[], entityIds: string[]) => links.linked(rowids, entityIds),
    about: async (rowids: number[], entityIds: string[]) => links.about(rowids, entityIds),
    positions: async (rowids: number[]) => positions.all(JSON.stringify(rowids)),
    rows: async (rowids: number[]) => rows.all(JSON.stringify(rowids)),
  };
}
