// The pool protocol: the tasks the main thread hands to the Piscina pool of read-only workers.
// Each task is declared once below (POOL_TASKS): its lane as a value the pool routes by, and what
// it takes and answers as types. A task's fields, its result and its lane cannot drift apart.
import type { MemoryHistoryResult } from '../schemas.js';
import type { Config } from '../config.js';
import type { WireError } from '../errors.js';
import type { SnapshotHeaderT } from '../file-formats.js';
import type {
  DeletionSnapshotRecord, InspectResult, ListEntitiesResult, ListEpisodesResult, Outcome, RecallGroupedResult, RecallResult, StatsResult,
  ValidatedInspect, ValidatedListEntities, ValidatedListEpisodes, ValidatedRecall, ValidatedRecallGrouped, NamespacesResult, ValidatedListNamespaces,
} from '../schemas.js';
import type { CheckedSnapshot, SnapshotSummary, StoredSnapshot, StoredSnapshotChunk } from '../snapshot-files.js';
import type { FramedSnapshot, SnapshotMemoryT } from '../snapshot-reader.js';
import type { Centroids, ConsolidationPlan, EmbeddedMemory, ExtractedMemory, VectorMove } from './writer.js';

/**
 * Interactive: reads a client waits for, kept short (recall and the like). Requested: heavier
 * work a client also waits for (an episode's extraction, a delete's snapshot, a consolidation
 * run), at normal OS priority so it is never starved. Background: upkeep nobody waits on.
 * src/core/pool/lane-pool.ts explains why the lanes are separate pools.
 */
export type Lane = 'interactive' | 'requested' | 'background';

/**
 * One pool task: the lane it runs in and, as types only (`types` is never set), the fields the
 * task carries beside its `op` and the value it answers.
 */
export interface TaskDeclaration<Fields, Result> {
  readonly lane: Lane;
  readonly types?: { fields: Fields; result: Result };
}

const task = <Fields extends object, Result>(lane: Lane): TaskDeclaration<Fields, Result> => ({ lane });

/**
 * A client answer serialised to JSON in the pool worker (`T`: the value it holds). It crosses to
 * the main thread as a transferred buffer — no structured clone — and REST sends it as it is.
 */
export type JsonBytes<T> = Uint8Array & { readonly [jsonOf]: T };
declare const jsonOf: unique symbol;

/**
 * A recall's answer. `rowids` of the returned memories go to the writer for reinforcement; never
 * sent to clients. `truncated`: memories were left out to keep the answer within
 * SERVICE_MAX_RESPONSE_BYTES. `embedded`: the query vector the worker computed (for the main
 * thread's cache); absent on a cache hit or embedder failure.
 */
interface RecallAnswer<T> { answer: JsonBytes<T>; rowids: number[]; truncated: boolean; embedded?: Float32Array }

/**
 * A recall's fields. `queryVector`: the query's embedding from the main thread's cache or its
 * batched model calls, when it had one. `after`: the write position the recall must see (PostgreSQL replicas,
 * read-your-writes): the furthest of this node's last commit and the caller's Memory-Position;
 * READ_PRIMARY (shared/wal-position.ts) when this node's last commit has no known position.
 */
interface RecallFields<Input> {
  input: Input;
  queryVector?: Float32Array;
  after?: string;
  /** When queryVector came from a batched model call: how long this recall waited for it (its embed stage). */
  embedMs?: number;
  /** SQLite with vector codes on: the namespace's shared store as the main thread holds it now (null: none; recall scans vec0). */
  vectorCodes?: SharedCodesHandle | null;
}

/** Every pool task, its lane, its fields and its result. */
export const POOL_TASKS = {
  recall: task<RecallFields<ValidatedRecall>, RecallAnswer<RecallResult>>('interactive'),
  recallGrouped: task<RecallFields<ValidatedRecallGrouped>, RecallAnswer<RecallGroupedResult>>('interactive'),
  inspect: task<{ input: ValidatedInspect }, { answer: JsonBytes<InspectResult>; truncated: boolean }>('interactive'),
  stats: task<object, StatsResult>('interactive'),
  memoryHistory: task<{ input: { memory_id: string } }, { answer: MemoryHistoryResult; truncated: boolean }>('interactive'),
  listEntities: task<{ input: ValidatedListEntities }, ListEntitiesResult>('interactive'),
  listEpisodes: task<{ input: ValidatedListEpisodes }, ListEpisodesResult>('interactive'),
  /** A page of the namespaces with their counts (GET /v1/namespaces, operator keys only). */
  listNamespaces: task<{ input: ValidatedListNamespaces }, NamespacesResult>('interactive'),
  // A count for /metrics: cheap, and a scrape must not wait behind a training run.
  embeddingBacklog: task<object, { count: number }>('interactive'),
  /**
   * Several recalls' queries embedded in one model call (core/query-embedding-batcher.ts); null
   * where the embedder failed (the recall then runs on its other signals).
   */
  embedQueries: task<{ texts: string[] }, { vectors: (Float32Array | null)[] }>('interactive'),
  /** Answers when this thread's warm-up (workers/warm-up.ts) has ended; sent once per interactive thread at start. */
  warmUp: task<object, { threadId: number; ms: number; embedded: number; recalled: number }>('interactive'),

  // `end`, DELETE and POST /v1/consolidate answer only when these finish: on the idle-priority
  // background lane they waited seconds under recall load, or a whole IVF training run.
  /** `extractor` says which tier produced the memories; `fallbackReason` why the LLM was not used. */
  prepareEpisodeEnd: task<
    { episodeId: string; outcome: Outcome | null },
    { memories: ExtractedMemory[]; extractor: 'llm' | 'rules' | 'none'; fallbackReason?: string; sourceIds: string[] }
  >('requested'),
  /** episodes/import: extraction over turns not stored yet (participants by name; unknown ones as first use creates them). */
  extractImport: task<
    { participants: string[]; outcome: Outcome | null; turns: { role: string; content: string }[] },
    { memories: ExtractedMemory[]; extractor: 'llm' | 'rules' | 'none'; fallbackReason?: string }
  >('requested'),
  planConsolidation: task<{ now: number }, ConsolidationPlan>('requested'),
  /**
   * The entity's rows as [rowid, id] (null snapshot when it had none). SQLite: all in the fsynced
   * snapshot file. PostgreSQL: `header` is the snapshot the writer copies each row into as it
   * deletes it (forgetRows' `snapshot`); nothing is written before. Pages a whole entity into a
   * snapshot file and fsyncs it (PostgreSQL: lists its rows): heavy, and never in recall's way.
   */
  snapshotEntity: task<
    { entity: string; maxRowid: number },
    { rows: [number, string][]; snapshot: DeletionSnapshotRecord | null; header?: SnapshotHeaderT }
  >('requested'),
  /**
   * One memory's deletion snapshot (DELETE /v1/memories/{id}), as snapshotEntity's with its owner
   * entity in the header; not found unless the namespace holds it.
   */
  snapshotMemory: task<
    { memoryId: string },
    { rows: [number, string][]; snapshot: DeletionSnapshotRecord | null; header?: SnapshotHeaderT }
  >('requested'),
  // Snapshot files or rows (a big one is hundreds of MB, read a chunk at a time): never in recall's way.
  listSnapshots: task<object, SnapshotSummary[]>('requested'),
  /**
   * A line-framed file, checked line by line and read later in chunks; or an older file, parsed
   * whole; or (PostgreSQL) a snapshot in tables, checked whole and read later in chunks.
   */
  checkSnapshot: task<{ snapshotId: string }, CheckedSnapshot | StoredSnapshot>('requested'),
  /** One chunk of a framed snapshot's memories (RESTORE_CHUNK); `next` is where the following one starts. */
  readSnapshotMemories: task<
    { snapshotId: string; fd: number; framed: FramedSnapshot; from: number },
    { memories: SnapshotMemoryT[]; next: number }
  >('requested'),
  /**
   * PostgreSQL: one RESTORE_CHUNK of the stored snapshot's memories above memory rowid `after`, in
   * memory rowid order; `next`: the rowid to read after (null: no more).
   */
  readStoredSnapshotMemories: task<{ snapshotId: string; after: number }, StoredSnapshotChunk>('requested'),

  /**
   * The oldest `limit` rows waiting for a vector embedded (`newestFirst`: the newest, which the
   * backfill's floor takes). `unembeddable`: rows the embedder rejected on their own (kept
   * BM25/graph-recallable). `ms`: how long the task ran in its thread, queueing excluded (the
   * floor's pacing).
   */
  embedPending: task<{ limit: number; newestFirst?: boolean }, { items: EmbeddedMemory[]; unembeddable: number[]; remaining: boolean; ms: number }>('background'),
  vectorIndexStatus: task<object, VectorIndexStatus>('background'),
  /** Every namespace's name (the background jobs take each in turn). */
  namespaceNames: task<object, string[]>('background'),
  /** The namespaces with memories waiting for a vector (the embedding backfill's rounds); `ms` as embedPending's. */
  pendingNamespaces: task<object, { names: string[]; ms: number }>('background'),
  trainVectorIndex: task<object, { trainedOn: number; centroids: Centroids }>('background'),
  staleVectorMoves: task<{ limit: number }, { moves: VectorMove[] }>('background'),
  /** The namespace's shared vector codes brought up to date from the store held now (core/vector-codes-registry.ts). */
  refreshVectorCodes: task<{ previous: SharedCodesHandle | null; limitBytes: number }, CodesRefresh>('background'),
} as const;

export type PoolOp = keyof typeof POOL_TASKS;
type Declared<K extends PoolOp> = NonNullable<(typeof POOL_TASKS)[K]['types']>;
/**
 * The task of op K as it crosses to the pool, with the namespace (by name) it reads: the
 * request's, resolved where it was authenticated, or the one a background job is serving.
 */
export type TaskOf<K extends PoolOp> = { op: K; namespace: string } & Declared<K>['fields'];
/** Any pool task. */
export type PoolTask = { [K in PoolOp]: TaskOf<K> }[PoolOp];
export type PoolResults = { [K in PoolOp]: Declared<K>['result'] };

/**
 * Milliseconds per named stage of a task (recall: one per signal, `hydrate`, `fusion`).
 * Internal: the main thread feeds them to metrics and strips them before responding.
 */
export type StageTimings = Record<string, number>;

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
  /** The primary did not answer (a failover) and a replica served what it had replayed: the cause, logged. */
  primaryFailure?: string;
}

/** What a task notes beside its result for the main thread's metrics. */
export interface TaskNotes extends ServedNote {
  readSide?: ReadSide;
  /** A recall of an indexed namespace found no shared vector codes to scan (SQLite): the registry may build them. */
  codesWanted?: boolean;
}

/** Outcome of a pool task: errors are returned, not thrown, so their code survives. */
export type TaskResult<T> =
  | ({ ok: true; value: T; timings?: StageTimings; readSide?: ReadSide; codesWanted?: boolean } & ServedNote)
  | { ok: false; error: WireError };

/** What a pool worker answers to a task of op K. */
export type PoolReply<K extends PoolOp> = TaskResult<PoolResults[K]>;

/**
 * A pool worker's dispatch table: one handler per task, resolving to that task's result; a
 * handler may record stage timings. A task without a handler fails to compile.
 */
export type PoolHandlers = {
  [K in PoolOp]: (task: TaskOf<K>, timings: StageTimings, notes: TaskNotes) => PoolResults[K] | Promise<PoolResults[K]>;
};

/** What each pool worker is started with. */
export interface PoolWorkerData {
  config: Config;
  /** PostgreSQL: the channel the pool asks its threads to close their connections on (shared/pool-close.ts). */
  closeChannel: string | null;
  /** Set by the pool: background-lane threads lower their OS priority. */
  lane?: Lane;
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

/**
 * The Int32 field of a shared codes store's header the main thread sets to 1 when the store is
 * replaced or dropped: threads still holding it let it go at their next recall of any namespace,
 * so a replaced store is not kept alive by a thread that no longer recalls its namespace.
 */
export const SHARED_CODES_RETIRED = 4;

/**
 * A store as it travels between threads (structured clone shares the memory, copies the rest).
 * `id` changes with every store built, so a reader knows whether it already has this one.
 */
export interface SharedCodesHandle {
  /** A shared WebAssembly.Memory (typed loosely here: the protocol does not depend on the kernel). */
  memory: { readonly buffer: ArrayBufferLike; grow(pages: number): number };
  id: number;
  dimensions: number;
  capacity: number;
  /** Room for this many cell ranges (the cells the codes were built over). */
  cellSlots: number;
  /** The IVF generations whose cells the codes use: valid while every one of them is installed. */
  generations: number[];
  /**
   * Every vector attached to a memory of the namespace with a vector_seq ≤ seq (the writer's
   * stamp, migration 14) is held; readers look above it in the file.
   */
  seq: number;
}

/** What a refresh of a namespace's store did (the registry keeps `handle`; logs and tests read the rest). */
export interface CodesRefresh {
  handle: SharedCodesHandle | null;
  /** 'built': a new store; 'appended': the same one, maybe with more vectors; 'none': no index or no room. */
  outcome: 'built' | 'appended' | 'none';
  vectors: number;
  bytes: number;
  /** 'none' because a new store did not fit: the bytes it would have taken. */
  neededBytes?: number;
}
