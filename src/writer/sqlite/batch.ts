// One group-commit transaction: every command in its own savepoint, so a command that fails
// is undone alone and its neighbours still commit; the rows' full-text index is written once,
// at the end (deferred-text-index.ts).
import type { Transaction } from 'better-sqlite3';
import type { Db } from '../../shared/db.js';
import { ServiceError, toWireError, type WireError } from '../../shared/errors.js';
import type { WriterCommand, WriterReply, WriterRequest } from '../../shared/protocol/writer.js';
import type { DeferredTextIndex } from './deferred-text-index.js';

/** Keeps the cause's code (a full disk stays STORAGE_FULL), so every command in the batch reports it. */
export class BatchRolledBack extends ServiceError {
  constructor(cause: WireError | null) {
    super(cause?.code === 'STORAGE_FULL' ? 'STORAGE_FULL' : 'INTERNAL',
      `write not stored: the transaction was rolled back (${cause?.message ?? 'unknown cause'})`);
    this.name = 'BatchRolledBack';
  }
}

/**
 * Returns a function that runs a batch in one transaction (call `.immediate(batch)` for
 * BEGIN IMMEDIATE) and returns one reply per command. It throws, committing nothing, when
 * SQLite rolled the whole transaction back under a command (SQLITE_FULL, SQLITE_IOERR…): the
 * earlier commands are gone then, and later ones would each autocommit on their own.
 */
export function batchRunner(
  db: Db, execute: (command: WriterCommand, namespace: string) => unknown, textIndex?: DeferredTextIndex,
): Transaction<(batch: WriterRequest[]) => WriterReply[]> {
  // Called inside the outer transaction, better-sqlite3 turns this into a SAVEPOINT.
  const inSavepoint = db.transaction(execute);
  return db.transaction((batch: WriterRequest[]): WriterReply[] => {
    const above = textIndex?.defer();
    const replies = batch.map((request): WriterReply => {
      let reply: WriterReply;
      try {
        reply = { id: request.id, ok: true, result: inSavepoint(request.command, request.namespace) };
      } catch (error) {
        reply = { id: request.id, ok: false, error: toWireError(error) };
      }
      if (!db.inTransaction) throw new BatchRolledBack(reply.ok ? null : reply.error);
      return reply;
    });
    // Failing here (a full disk) rolls the whole flush back: every command reports it.
    if (above !== undefined) textIndex!.index(above);
    return replies;
  });
}
