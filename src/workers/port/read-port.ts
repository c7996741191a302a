// The read port: everything the pool threads read from storage, behind one interface with one
// adapter per backend (the SQLite file: sqlite/; PostgreSQL: postgres/). Methods
// return promises because a network database answers later; the SQLite adapter runs the same
// synchronous statements as before and hands back settled promises, one per signal or lookup,
// never one per row. What is done with the rows — fusion, budgets, extraction, snapshots'
// files — stays outside the adapters, written once.
import type { EntityRecord, ListEntitiesResult, ListEpisodesResult, StatsResult, ValidatedListEntities, ValidatedListEpisodes } from '../../shared/schemas.js';
import type { CodesRefresh, PoolResults, ReadSide, ServedNote, SharedCodesHandle, VectorIndexStatus } from '../../shared/protocol/pool.js';
import type { VectorMove } from '../../shared/protocol/writer.js';
import type { SnapshotFileT, SnapshotHeaderT } from '../../shared/file-formats.js';
import type { SnapshotSummary, StoredSnapshotChunk } from '../../shared/snapshot-files.js';
import type { Centroids } from '../../shared/protocol/writer.js';
import type { EpisodeRow, HistoryRows, MemoryRow } from './rows.js';
import type { CandidateFilter, CandidateRow, Proposal, RecallContext } from './candidates.js';
import type { RecentTranscript } from './recent-transcript.js';

/**
 * The reads of one recall, all from one consistent snapshot (so the IVF cells probed and the
 * vectors scanned agree while the indexer moves vectors). Filters (namespace, archived, types,
 * entity) are applied inside every candidate read.
 */
export interface RecallReads {
  entity(name: string): Promise<EntityRecord | undefined>;
  /** Ids of the entities the text names (1–4 word spans, any case). */
  entitiesNamedIn(text: string): Promise<string[]>;
  /** Lexical candidates, best first, each with its raw relevance (higher is better; BM25-like). */
  lexical(ctx: RecallContext): Promise<Proposal[]>;
  /** Vector candidates, nearest first, score = cosine similarity, faint ones marked weak. */
  nearest(ctx: RecallContext): Promise<Proposal[]>;
  /** Cosine similarity of the query to each of these memories that has a vector. */
  similarities(queryVector: Float32Array, rowids: number[]): Promise<Map<number, number>>;
  /** The stored vectors of these memories (those without one yet are absent). */
  vectors(rowids: number[]): Promise<Map<number, Float32Array>>;
  /** Episodic turns near these (same episode, seq ± 1 up to ± reach), passing the filter. */
  adjacent(rowids: number[], filter: CandidateFilter, reach?: number): Promise<number[]>;
  /** Every memory of those entities that have at most `depth` memories (passing the filter), at most `depth` in all. */
  membersOfFew(entityIds: string[], depth: number, filter: CandidateFilter): Promise<number[]>;
  /** The memories among these that link one of the entities (any relation). */
  linked(rowids: number[], entityIds: string[]): Promise<Set<number>>;
  /**
   * The memories among these that are by or about one of the entities — linked as owner or
   * mention, not merely as a participant of the episode they were said in.
   */
  about(rowids: number[], entityIds: string[]): Promise<Set<number>>;
  /** What ranking needs of each candidate (no content). */
  positions(rowids: number[]): Promise<CandidateRow[]>;
  /** Whole rows, any order (missing rowids are absent). */
  rows(rowids: number[]): Promise<MemoryRow[]>;
}

/** An episodic memory promotion may cluster, with the entity its episode is about (consolidation/promotion.ts). */
export interface PromotionCandidate {
  rowid: number;
  content: string;
  content_key: string;
  episode_id: string | null;
  /** The episode's first user participant, else its first participant. */
  subject_id: string | null;
  /** The stored vector, or null when the backfill has not embedded the row yet. */
  vector: Float32Array | null;
}

/** A memory a decay run may change (consolidation/decay.ts). */
export interface DecayCandidate {
  rowid: number;
  stability: number;
  difficulty: number;
  last_access_at: number;
  decayed_at: number | null;
}

/**
 * Told which side served a snapshot (PostgreSQL with replicas), and with the primary why it served
 * one a replica was asked for first: the replica failed (`replicaFailure`, the cause, when this pool
 * thread has not said so lately: logged), or it cancelled the snapshot on a recovery conflict (counted).
 */
export type OnServed = (side: ReadSide, note?: ServedNote) => void;

export interface SnapshotOptions {
  /** PostgreSQL: the WAL position (pg_lsn text) of the caller's last write. */
  after?: string;
  /**
   * Told which side served the snapshot, when replicas are configured (metrics), and with it why
   * the primary served instead of a replica: a replica failure when that is to be logged
   * (PostgreSQL: at most once a minute per thread), a recovery conflict every time (counted).
   */
  onServed?: OnServed;
}

/** One namespace's reads for the pool's task handlers (worker.ts). */
export interface ReadPort {
  readonly namespace: string;
  /**
   * Runs one recall's reads on one snapshot; the snapshot ends when `work` settles. `after`: a
   * write position the snapshot must include (read-your-writes on replicas; SQLite readers
   * share the writer's file and always do).
   */
  snapshot<T>(work: (reads: RecallReads) => Promise<T>, options?: SnapshotOptions): Promise<T>;

  entity(name: string): Promise<EntityRecord | undefined>;
  entitiesNamedIn(text: string): Promise<string[]>;
  /**
   * The entity's active memories (owner or participant), newest first, at least those whose
   * content fits `budgetBytes` (the caller cuts exactly, withinBudget): lazy on SQLite, and on a
   * network database never much more than the budget moved. Superseded facts only when asked.
   */
  entityMemories(entityId: string, limit: number, budgetBytes: number, includeSuperseded?: boolean): Promise<Iterable<MemoryRow>>;
  stats(): Promise<StatsResult>;
  /** A memory of this namespace with its attribute's chain and what was promoted into it. */
  memoryHistory(id: string, budgetBytes: number): Promise<HistoryRows | undefined>;
  entities(query: ValidatedListEntities): Promise<ListEntitiesResult>;
  /** A page of the namespace's episodes, newest started first (those the entity took part in, when named); none whose participants are all forgotten. */
  episodes(query: ValidatedListEpisodes): Promise<ListEpisodesResult>;
  episode(id: string): Promise<EpisodeRow | undefined>;
  episodeStarts(ids: string[]): Promise<Map<string, number>>;
  /** What `end` extracts from: the most recent turns within `budgetChars` (recent-transcript.ts). */
  recentTranscript(episodeId: string, budgetChars: number): Promise<RecentTranscript>;
  participants(episodeId: string): Promise<EntityRecord[]>;
  /** Memories still waiting for a vector, oldest first (or newest first: the backfill's floor). */
  unembedded(limit: number, newestFirst?: boolean): Promise<{ rowid: number; content: string }[]>;
  unembeddedCount(): Promise<number>;

  /** The IVF cell a new vector belongs in (the unassigned cell when there is no index). */
  cellFor(vector: Float32Array): Promise<number>;
  vectorIndexStatus(): Promise<VectorIndexStatus>;
  /** Centroids for the namespace as it is now (spherical k-means over a sample). */
  trainVectorIndex(): Promise<{ trainedOn: number; centroids: Centroids }>;
  /** Up to `limit` vectors in an older generation's cells, each with its newest-generation cell. */
  staleVectorMoves(limit: number): Promise<VectorMove[]>;
  /**
   * SQLite only (absent elsewhere): the namespace's shared vector codes brought up to date
   * (workers/sqlite/vector-codes.ts), at most `limitBytes`; a background task.
   */
  refreshVectorCodes?(previous: SharedCodesHandle | null, limitBytes: number): Promise<CodesRefresh>;

  // Consolidation's reads (a network database answers them from the primary; the writer
  // re-checks every item of the plan against the row as it is when applied).
  /** The rowid the last promotion run clustered up to (0 before the first run). */
  promotionWatermark(): Promise<number>;
  /** The namespace's newest episodic rowid (0 when it has none). */
  newestEpisodicRowid(): Promise<number>;
  /**
   * Active, unpromoted episodic memories not spoken by the agent side, of every subject that has
   * one newer than `watermark`: each subject's newest `perSubject`, oldest first. The cap is applied
   * by the database, so a subject with a million turns costs the pool thread `perSubject` rows.
   */
  promotionCandidates(watermark: number, perSubject: number): Promise<PromotionCandidate[]>;
  /**
   * Active memories unrecalled for longer than their stability since their last access or decay
   * step, or whose last access is older than stability × archiveFactor days (already below the
   * archive threshold). Any order.
   */
  decayCandidates(now: number, archiveFactor: number): Promise<DecayCandidate[]>;

  /**
   * Deletion snapshots, oldest first (a damaged one listed with its problem); a missing or
   * unusable one is a SnapshotFileError, as for the files.
   */
  listSnapshots(): Promise<SnapshotSummary[]>;
  readSnapshot(snapshotId: string): Promise<SnapshotFileT>;
  /** A snapshot checked whole, every memory, before a restore writes anything: its header. */
  checkSnapshot(snapshotId: string): Promise<SnapshotHeaderT>;
  /**
   * One RESTORE_CHUNK of a snapshot's memories, in rowid order, after cursor `after` (0: from
   * the first; then the chunk's `next`). On PostgreSQL the online restore streams these (keyset
   * by memory rowid); SQLite's restore streams its file by byte offset instead (worker.ts) — a
   * file has no index, so here it is read from its start.
   */
  snapshotMemories(snapshotId: string, after: number): Promise<StoredSnapshotChunk>;
  /**
   * First half of deleting an entity: its rows up to maxRowid (owner or participant). SQLite
   * writes and fsyncs the snapshot file here; PostgreSQL only names the snapshot (`header`),
   * which the writer fills in the delete's own transaction.
   */
  snapshotEntity(entityName: string, maxRowid: number): Promise<PoolResults['snapshotEntity']>;
  /** One memory's deletion snapshot (SQLite: the file, fsynced; PostgreSQL: its row and header). */
  snapshotMemory(memoryId: string): Promise<PoolResults['snapshotMemory']>;
}
