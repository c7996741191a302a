// Every message that crosses a thread boundary is one of these typed objects. Requests carry
// an id; replies carry the same id; errors cross as a plain WireError.
import type { WireError } from './errors.js';
import type { PriorityChange } from './os-thread.js';
import type {
  DeletionSnapshotRecord, EntityKind, EntityRecord, MemoryType, Outcome, StoredFactRecord, StartEpisodeResult, EndEpisodeResult,
} from './schemas.js';

/** A memory produced by extraction, ready for the writer to store. */
export interface ExtractedMemory {
  content: string;
  memory_type: Exclude<MemoryType, 'episodic'>;
  confidence: number;
  /** 1 = rule-based, 2 = LLM. */
  extraction_tier: number;
  /** Entity names the memory is about; the first is its owner. */
  entities: string[];
}

/** Writes, handled by the single writer thread. Each maps to its result in WriterResults. */
export type WriterCommand =
  | { type: 'ensureEntity'; name: string; kind: EntityKind }
  | { type: 'remember'; entity: string; fact: string; confidence: number }
  | { type: 'startEpisode'; participants: string[] }
  | { type: 'addMessage'; episodeId: string; role: string; content: string }
  | {
      type: 'endEpisode'; episodeId: string; outcome: Outcome | null; memories: ExtractedMemory[];
      /** Ids of the turns extraction read: if any is gone by now (deleted), nothing is stored. */
      sourceIds: string[];
    }
  | {
      /**
       * Opens a delete of `entity`: until forgetEnd, the entity's memories with a rowid up to the
       * returned `maxRowid` (the rows its snapshot will hold) count as deleted for de-duplication
       * and for extraction, so no write acknowledged meanwhile lands on a row about to go.
       */
      type: 'forgetBegin';
      deletionId: number;
      entity: string;
    }
  | { type: 'forgetEnd'; deletionId: number }
  | {
      type: 'forgetRows';
      /** [rowid, id] pairs from an fsynced deletion snapshot; the id guards against a reused rowid. */
      rows: [number, string][];
      /**
       * PostgreSQL only (required there): the snapshot each row is copied into, in the same
       * transaction that deletes it (tables, not a file). SQLite leaves it out: its snapshot file
       * was fsynced before the first chunk.
       */
      snapshot?: import('./file-formats.js').SnapshotHeaderT;
    }
  | {
      /**
       * Puts back part of a deletion snapshot (src/core/snapshot-restore.ts): as many of `memories`
       * as fit the writer's time budget; the reply says how many were handled.
       */
      type: 'restoreRows';
      snapshot: import('./file-formats.js').SnapshotHeaderT;
      memories: import('./file-formats.js').SnapshotFileT['memories'];
    }
  | { type: 'attachVectors'; items: EmbeddedMemory[]; unembeddable?: number[] }
  | { type: 'reinforce'; rowids: number[]; at: number }
  | { type: 'consolidate'; plan: ConsolidationPlan }
  | { type: 'installVectorGeneration'; trainedOn: number; centroids: Centroids }
  | { type: 'moveVectors'; moves: VectorMove[] }
  | { type: 'retireVectorGenerations' };

/** A stale vector and the cell of the newest IVF generation it belongs in. */
export interface VectorMove {
  rowid: number;
  cell: number;
}

/**
 * What a consolidation run will change, computed in the pool from a read snapshot. The writer
 * re-checks each item against the current row (it may have been recalled, deleted or promoted
 * meanwhile) and counts only what it really changed.
 */
export interface ConsolidationPlan {
  at: number;
  /** Episodic rowids up to this one have been considered for promotion (stored by the writer). */
  watermark: number;
  /** Near-duplicate episodic memories of one entity that become one semantic memory. */
  promote: { ownerId: string; content: string; confidence: number; episodeId: string | null; members: number[] }[];
  /** FSRS state after decay; `lastAccessAt` is what the planner saw (unchanged = still applies). */
  decay: { rowid: number; lastAccessAt: number; stability: number; difficulty: number; decayed: boolean; archive: boolean }[];
}

/** A vector computed in the pool for a stored memory, plus entities its text mentions. */
export interface EmbeddedMemory {
  rowid: number;
  vector: Float32Array;
  /** IVF cell the pool chose (the writer checks it is still current); 0 = unassigned. */
  cell: number;
  mentionedEntityIds: string[];
}

export interface WriterResults {
  ensureEntity: EntityRecord;
  remember: StoredFactRecord;
  startEpisode: StartEpisodeResult;
  addMessage: { status: 'ok' };
  /** The tier is added by the caller: the pool, not the writer, knows which extractor ran. */
  endEpisode: Omit<EndEpisodeResult, 'extraction_tier'>;
  /** `processed`: how many of `rows` were handled (the rest did not fit the time budget). */
  forgetBegin: { maxRowid: number };
  forgetEnd: { status: 'ok' };
  /**
   * `copied` (PostgreSQL): the removed rows copied into the snapshot, by memory type — the
   * snapshot's counts are these, not the listing's (a row listed may be gone by the time its
   * chunk runs). SQLite's snapshot is the file, written whole before the first chunk.
   */
  forgetRows: { processed: number; removed: number; copied?: Record<MemoryType, number> };
  /** `processed`: how many of `memories` were handled; `restored` + `present` = processed. */
  restoreRows: { processed: number; restored: number; present: number };
  attachVectors: { attached: number };
  reinforce: { reinforced: number };
  consolidate: import('./schemas.js').ConsolidateResult;
  installVectorGeneration: { generation: number; cells: number };
  moveVectors: { moved: number; repaired: number };
  retireVectorGenerations: { retired: number };
}

export type WriterCommandType = WriterCommand['type'];
export type CommandOf<T extends WriterCommandType> = Extract<WriterCommand, { type: T }>;

/**
 * The writer thread's dispatch table: one handler per command, returning that command's result.
 * A command without a handler, or a handler returning the wrong shape, fails to compile.
 */
export type WriterHandlers = { [K in WriterCommandType]: (command: CommandOf<K>) => WriterResults[K] };

export interface WriterRequest {
  id: number;
  command: WriterCommand;
}

export type WriterReply =
  /**
   * `position` (PostgreSQL): the WAL position at or past the commit of the batch this command was
   * in, when it could be read — what the answer to the write carries (Memory-Position).
   */
  | { id: number; ok: true; result: unknown; position?: string }
  | { id: number; ok: false; error: WireError };

/** Sent by the writer after each committed transaction (for metrics and tests). */
export interface WriterBatchReport {
  type: 'batch';
  commands: number;
  commitMs: number;
  /**
   * PostgreSQL: the WAL position at or past the commit (see BatchOutcome in writer/store-port.ts);
   * null when the batch committed but its position could not be read. Absent on SQLite, and when
   * the flush committed nothing.
   */
  position?: string | null;
}

/** Sent instead of WriterReady when the file could not be opened or migrated. */
export interface WriterStartFailed {
  type: 'startFailed';
  /** SQLite's or the file system's code, e.g. SQLITE_CORRUPT, SQLITE_NOTADB, EACCES. */
  code: string;
  message: string;
}

/** Sent once by the writer when its connection is open and migrated. */
export interface WriterReady {
  type: 'ready';
  namespaceId: number;
  /** Whether the writer could lower its OS priority below the process's (logged once if not). */
  priority: PriorityChange;
}

/** Outcome of a pool task: errors are returned, not thrown, so their code survives. */
export type TaskResult<T> =
  | ({ ok: true; value: T; timings?: StageTimings; readSide?: ReadSide } & ServedNote)
  | { ok: false; error: WireError };

/**
 * Which side of a PostgreSQL setup with replicas served a recall's snapshot: a replica, or the
 * primary because no replica replayed the writes the recall must see in time — this node's last one,
 * the caller's Memory-Position — or one has no known position (metrics; never sent to a caller).
 */
export type ReadSide = 'replica' | 'primary';

/** Why the primary served a snapshot that a replica was asked for first, when it is worth telling. */
export interface ServedNote {
  /** A replica failed and the primary served instead: the cause, to be logged (rate-limited per thread). */
  replicaFailure?: string;
  /** The replica cancelled the snapshot on a recovery conflict and the primary ran it again (counted). */
  recoveryConflict?: boolean;
}

/** What a task notes beside its result for the main thread's metrics. */
export interface TaskNotes extends ServedNote {
  readSide?: ReadSide;
}

/**
 * Milliseconds per named stage of a task (recall: one per signal, `hydrate`, `fusion`).
 * Internal: the main thread feeds them to metrics and strips them before responding.
 */
export type StageTimings = Record<string, number>;

/** Reads and CPU work, run in the Piscina pool against a read-only connection. */
export type PoolTask =
  /** `queryVector`: the query's embedding from the main thread's cache, when it had one. */
  // `after`: the write position the recall must see (PostgreSQL replicas, read-your-writes): the
  // furthest of this node's last commit and the caller's Memory-Position; READ_PRIMARY
  // (shared/wal-position.ts) when this node's last commit has no known position.
  | { op: 'recall'; input: import('./schemas.js').ValidatedRecall; queryVector?: Float32Array; after?: string }
  | { op: 'recallGrouped'; input: import('./schemas.js').ValidatedRecallGrouped; queryVector?: Float32Array; after?: string }
  | { op: 'inspect'; input: import('./schemas.js').ValidatedInspect }
  | { op: 'stats' }
  | { op: 'prepareEpisodeEnd'; episodeId: string; outcome: import('./schemas.js').Outcome | null }
  | { op: 'embedPending'; limit: number }
  | { op: 'embeddingBacklog' }
  | { op: 'planConsolidation'; now: number }
  | { op: 'vectorIndexStatus' }
  | { op: 'trainVectorIndex' }
  | { op: 'staleVectorMoves'; limit: number }
  | { op: 'snapshotEntity'; entity: string; maxRowid: number }
  | { op: 'listSnapshots' }
  | { op: 'checkSnapshot'; snapshotId: string }
  | { op: 'readSnapshotMemories'; snapshotId: string; fd: number; framed: import('./snapshot-reader.js').FramedSnapshot; from: number }
  /** PostgreSQL: the stored snapshot's memories above memory rowid `after`, one RESTORE_CHUNK. */
  | { op: 'readStoredSnapshotMemories'; snapshotId: string; after: number }
  | { op: 'listEntities'; input: import('./schemas.js').ValidatedListEntities };

/**
 * A client answer serialised to JSON in the pool worker (`T`: the value it holds). It crosses to
 * the main thread as a transferred buffer — no structured clone — and REST sends it as it is.
 */
export type JsonBytes<T> = Uint8Array & { readonly [jsonOf]: T };
declare const jsonOf: unique symbol;

export interface PoolResults {
  /**
   * `rowids` of the returned memories go to the writer for reinforcement; never sent to clients.
   * `truncated`: memories were left out to keep the answer within SERVICE_MAX_RESPONSE_BYTES.
   * `embedded`: the query vector the worker computed (for the main thread's cache); absent on a cache hit or embedder failure.
   */
  recall: { answer: JsonBytes<import('./schemas.js').RecallResult>; rowids: number[]; truncated: boolean; embedded?: Float32Array };
  recallGrouped: { answer: JsonBytes<import('./schemas.js').RecallGroupedResult>; rowids: number[]; truncated: boolean; embedded?: Float32Array };
  inspect: { answer: JsonBytes<import('./schemas.js').InspectResult>; truncated: boolean };
  /**
   * The entity's rows as [rowid, id] (null snapshot when it had none). SQLite: all in the fsynced
   * snapshot file. PostgreSQL: `header` is the snapshot the writer copies each row into as it
   * deletes it (forgetRows' `snapshot`); nothing is written before.
   */
  snapshotEntity: { rows: [number, string][]; snapshot: DeletionSnapshotRecord | null; header?: import('./file-formats.js').SnapshotHeaderT };
  stats: import('./schemas.js').StatsResult;
  listSnapshots: import('./snapshot-files.js').SnapshotSummary[];
  /**
   * A line-framed file, checked line by line and read later in chunks; or an older file, parsed
   * whole; or (PostgreSQL) a snapshot in tables, checked whole and read later in chunks.
   */
  checkSnapshot: import('./snapshot-files.js').CheckedSnapshot | import('./snapshot-files.js').StoredSnapshot;
  /** One chunk of a framed snapshot's memories (RESTORE_CHUNK); `next` is where the following one starts. */
  readSnapshotMemories: { memories: import('./snapshot-reader.js').SnapshotMemoryT[]; next: number };
  /** One chunk of a stored snapshot's memories in memory rowid order; `next`: the rowid to read after (null: no more). */
  readStoredSnapshotMemories: import('./snapshot-files.js').StoredSnapshotChunk;
  listEntities: import('./schemas.js').ListEntitiesResult;
  /** `extractor` says which tier produced the memories; `fallbackReason` why the LLM was not used. */
  prepareEpisodeEnd: { memories: ExtractedMemory[]; extractor: 'llm' | 'rules' | 'none'; fallbackReason?: string; sourceIds: string[] };
  /** `unembeddable`: rows the embedder rejected on their own (kept BM25/graph-recallable). */
  embedPending: { items: EmbeddedMemory[]; unembeddable: number[]; remaining: boolean };
  embeddingBacklog: { count: number };
  planConsolidation: ConsolidationPlan;
  vectorIndexStatus: VectorIndexStatus;
  trainVectorIndex: { trainedOn: number; centroids: Centroids };
  staleVectorMoves: { moves: VectorMove[] };
}

export type PoolOp = PoolTask['op'];
export type TaskOf<T extends PoolOp> = Extract<PoolTask, { op: T }>;

/**
 * A pool worker's dispatch table: one handler per task, resolving to that task's result; a
 * handler may record stage timings. A task without a handler fails to compile.
 */
export type PoolHandlers = {
  [K in PoolOp]: (task: TaskOf<K>, timings: StageTimings, notes: TaskNotes) => PoolResults[K] | Promise<PoolResults[K]>;
};

/** What a pool worker answers to a task of op K. */
export type PoolReply<K extends PoolOp> = TaskResult<PoolResults[K]>;

/** What each pool worker is started with. */
export interface PoolWorkerData {
  config: import('./config.js').Config;
  namespaceId: number;
  /** PostgreSQL: the channel the pool asks its threads to close their connections on (shared/pool-close.ts). */
  closeChannel: string | null;
  /** Set by the pool: background-lane threads lower their OS priority. */
  lane?: Lane;
}

/**
 * Interactive: reads a client waits for, kept short (recall and the like). Requested: heavier
 * work a client also waits for (an episode's extraction, a delete's snapshot, a consolidation
 * run), at normal OS priority so it is never starved. Background: upkeep nobody waits on.
 */
export type Lane = 'interactive' | 'requested' | 'background';

/** Which lane each pool task runs in (src/core/pool/lane-pool.ts explains why two). */
export const LANE_OF: Readonly<Record<PoolOp, Lane>> = {
  recall: 'interactive',
  recallGrouped: 'interactive',
  inspect: 'interactive',
  stats: 'interactive',
  // A count for /metrics: cheap, and a scrape must not wait behind a training run.
  embeddingBacklog: 'interactive',
  // `end`, DELETE and POST /v1/consolidate answer only when these finish: on the idle-priority
  // background lane they waited seconds under recall load, or a whole IVF training run.
  prepareEpisodeEnd: 'requested',
  planConsolidation: 'requested',
  embedPending: 'background',
  vectorIndexStatus: 'background',
  trainVectorIndex: 'background',
  staleVectorMoves: 'background',
  // Pages a whole entity into a snapshot file and fsyncs it (PostgreSQL: lists its rows): heavy, and never in recall's way.
  snapshotEntity: 'requested',
  // Read snapshot files or rows (a big one is hundreds of MB, read a chunk at a time): never in recall's way.
  listSnapshots: 'requested',
  checkSnapshot: 'requested',
  readSnapshotMemories: 'requested',
  readStoredSnapshotMemories: 'requested',
  listEntities: 'interactive',
};

/** An IVF generation's centroids, row-major (`count` × `dimensions`), computed in the pool. */
export interface Centroids {
  readonly count: number;
  readonly dimensions: number;
  readonly data: Float32Array;
}

export interface VectorIndexStatus {
  /** Vectors stored for the namespace. */
  vectors: number;
  /** Vectors not in a cell of the newest generation (unassigned, or in an older one). */
  stale: number;
  /** Installed generations: 0 = no index yet; 2 while vectors move to a new one. */
  generations: number;
  /** Vectors the newest generation was trained on. */
  trainedOn: number | null;
  cells: number;
}
