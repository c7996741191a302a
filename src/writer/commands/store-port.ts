// The store port (issue 16): what the writer thread needs from storage, whichever engine holds
// it. The thread queues commands and hands each flush to `runBatch`; an adapter runs the flush
// as ONE transaction with each command in its own savepoint (a failing command is undone alone,
// its neighbours commit) and answers one reply per command, in order, only once COMMIT returned.
// Two adapters: SQLite (../sqlite/, synchronous inside BEGIN IMMEDIATE — the embedded default)
// and PostgreSQL (../postgres/, asynchronous), both running the rules beside this file over their
// own rows (rows.ts). Both pass test/store-contract.
import type { WriterReply, WriterRequest } from '../../shared/protocol/writer.js';

/** One committed flush. */
export interface BatchOutcome {
  replies: WriterReply[];
  /**
   * PostgreSQL: the WAL position at or past this flush's commit record (pg_lsn text, e.g.
   * '0/16B3748'). A replica whose pg_last_wal_replay_lsn() has reached it sees every write of the
   * flush (read-your-writes). Null when it could not be read after COMMIT (the flush is committed
   * all the same: recalls then read the primary, core/node-position.ts). Absent for SQLite, where
   * readers share the file.
   */
  position?: string | null;
}

export interface WriteStorePort {
  /** SERVICE_NAMESPACE's id in this database (created at open when new, as it always was). */
  readonly namespaceId: number;
  /** SERVICE_NAMESPACE: the name requests act on unless their key or header names another. */
  readonly namespace: string;
  /**
   * Runs one flush. Returns synchronously when the engine is synchronous (SQLite: no promise, no
   * extra tick on the embedded path). Throws or rejects, committing nothing, when the transaction
   * as a whole failed (disk full, connection lost, COMMIT refused): every command then failed.
   * The caller never starts a flush before the previous one settled (one transaction at a time).
   */
  runBatch(batch: WriterRequest[]): BatchOutcome | Promise<BatchOutcome>;
  /** Ends the connection(s) once the last flush settled. */
  close(): void | Promise<void>;
}
