// The writer protocol: the commands the main thread (and the pool, through it) sends to the one
// writer thread, their results, and the thread's own reports. Requests carry an id; replies carry
// the same id; errors cross as a plain WireError.
import type { WireError } from '../errors.js';
import type { SnapshotFileT, SnapshotHeaderT } from '../file-formats.js';
import type { PriorityChange } from '../os-thread.js';
import type {
  ConsolidateResult, EndEpisodeResult, EntityKind, EntityRecord, MemoryType, Outcome, StartEpisodeResult, StoredFactRecord,
} from '../schemas.js';

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
  // Event times (ms; docs/time.md): absent means now.
  | { type: 'remember'; entity: string; fact: string; confidence: number; validFrom?: number }
  | { type: 'startEpisode'; participants: string[]; startedAt?: number }
  | { type: 'addMessage'; episodeId: string; role: string; content: string; occurredAt?: number }
  | { type: 'rememberBatch'; facts: { entity: string; fact: string; confidence: number; validFrom?: number }[] }
  | {
      /** A whole past conversation, ended, with what extraction (run in the pool on `messages`) produced. */
      type: 'importEpisode'; participants: string[]; startedAt?: number; outcome: Outcome | null;
      messages: { role: string; content: string; occurredAt?: number }[]; memories: ExtractedMemory[];
    }
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
      /**
       * After the delete's last forgetRows: removes the entity itself — its record, its episode
       * participations and the mention links other memories hold to it — when no memory of it is
       * left (one written meanwhile keeps it). The deletion's snapshot holds the record.
       */
      type: 'forgetEntity';
      deletionId: number;
    }
  | {
      /**
       * Removes one memory (DELETE /v1/memories/{id}) whose snapshot was taken as forgetRows'
       * is; the facts it had superseded take over its own end (it leaves the chain).
       */
      type: 'retractMemory';
      row: [number, string];
      snapshot?: SnapshotHeaderT;
    }
  | {
      type: 'forgetRows';
      /** [rowid, id] pairs from an fsynced deletion snapshot; the id guards against a reused rowid. */
      rows: [number, string][];
      /**
       * PostgreSQL only (required there): the snapshot each row is copied into, in the same
       * transaction that deletes it (tables, not a file). SQLite leaves it out: its snapshot file
       * was fsynced before the first chunk.
       */
      snapshot?: SnapshotHeaderT;
    }
  | {
      /**
       * Puts back part of a deletion snapshot (src/core/snapshot-restore.ts): as many of `memories`
       * as fit the writer's time budget; the reply says how many were handled.
       */
      type: 'restoreRows';
      snapshot: SnapshotHeaderT;
      memories: SnapshotFileT['memories'];
    }
  | { type: 'attachVectors'; items: EmbeddedMemory[]; unembeddable?: number[] }
  | { type: 'reinforce'; rowids: number[]; at: number }
  | { type: 'consolidate'; plan: ConsolidationPlan }
  | { type: 'installVectorGeneration'; trainedOn: number; centroids: Centroids }
  | { type: 'moveVectors'; moves: VectorMove[] }
  | { type: 'retireVectorGenerations' }
  | {
      /**
       * Superseded facts whose valid_until lies after `after` and is past now, up to `limit` of
       * them: each vector into the vec0 cell the rule calls for (docs/superseded-vectors.md).
       * null: from the start (a file written before retired cells, or a service just started).
       */
      type: 'retireSupersededVectors';
      after: SupersededCursor | null;
      limit: number;
    };

/** A place in the order (valid_until, rowid) of superseded facts: the retire sweep's progress. */
export interface SupersededCursor {
  validUntil: number;
  rowid: number;
}

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

/** An IVF generation's centroids, row-major (`count` × `dimensions`), computed in the pool. */
export interface Centroids {
  readonly count: number;
  readonly dimensions: number;
  readonly data: Float32Array;
}

export interface WriterResults {
  ensureEntity: EntityRecord;
  remember: StoredFactRecord;
  rememberBatch: StoredFactRecord[];
  startEpisode: StartEpisodeResult;
  importEpisode: { episode_id: string; memories_created: number };
  addMessage: { status: 'ok' };
  /** The tier is added by the caller: the pool, not the writer, knows which extractor ran. */
  endEpisode: Omit<EndEpisodeResult, 'extraction_tier'>;
  forgetBegin: { maxRowid: number };
  forgetEnd: { status: 'ok' };
  /** `removed`: the entity record went (false: it still has memories, or it was gone already). */
  forgetEntity: { removed: boolean };
  /**
   * `processed`: how many of `rows` were handled (the rest did not fit the time budget).
   * `copied` (PostgreSQL): the removed rows copied into the snapshot, by memory type — the
   * snapshot's counts are these, not the listing's (a row listed may be gone by the time its
   * chunk runs). SQLite's snapshot is the file, written whole before the first chunk.
   */
  forgetRows: { processed: number; removed: number; copied?: Record<MemoryType, number> };
  retractMemory: { removed: number };
  /** `processed`: how many of `memories` were handled; `restored` + `present` = processed. */
  restoreRows: { processed: number; restored: number; present: number };
  attachVectors: { attached: number };
  reinforce: { reinforced: number };
  consolidate: ConsolidateResult;
  installVectorGeneration: { generation: number; cells: number };
  moveVectors: { moved: number; repaired: number };
  retireVectorGenerations: { retired: number };
  /**
   * `moved`: vectors that changed cell. `done`: every fact superseded up to now was looked at;
   * `next` is where the next sweep starts. `next` null: this backend keeps no retired vectors.
   */
  retireSupersededVectors: { moved: number; done: boolean; next: SupersededCursor | null };
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
  /**
   * The namespace (by name) the command acts on, resolved once where the request was
   * authenticated (http/namespace-scope.ts). The writer turns it into its row id, creating the
   * row only for commands that store something new (writer/namespaces.ts).
   */
  namespace: string;
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
   * PostgreSQL: the WAL position at or past the commit (see BatchOutcome in writer/commands/store-port.ts);
   * null when the batch committed but its position could not be read. Absent on SQLite, and when
   * the flush committed nothing.
   */
  position?: string | null;
}

/** PostgreSQL: the writer lost the primary (writes answer DATABASE_UNAVAILABLE), or found it again. */
export interface WriterDatabaseState {
  type: 'database';
  available: boolean;
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
  /** The id of SERVICE_NAMESPACE (created at start, so existing deployments see no change). */
  namespaceId: number;
  /** Whether the writer could lower its OS priority below the process's (logged once if not). */
  priority: PriorityChange;
}
