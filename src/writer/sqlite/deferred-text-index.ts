// The full-text index of a flush's rows, written once before COMMIT instead of row by row.
//
// FTS5 writes the terms it holds as a new segment whenever a savepoint opens or is released
// (it cannot undo part of what it holds). Group commit runs every command in a savepoint of its
// own, so the insert trigger made each remembered row a segment, and FTS5 then merged them:
// about a quarter of a remember's CPU. Inside a flush, the triggers leave the rows the flush
// adds to this step (migration 12), which indexes the survivors in one statement: one segment
// per flush. What COMMIT stores is what the triggers would have stored: the same rows in
// memories_fts, the same per-namespace statistics. Rows a command added and a later one
// deleted or rewrote are simply indexed as they stand; rows a failed command added are gone
// with its savepoint.
import type { Db } from '../../shared/db.js';
import { rowsTextStatsSql, TEXT_INDEX_DEFERRED } from '../../shared/sql-schema.js';

export class DeferredTextIndex {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      lastRowid: db.prepare<[], number>('SELECT coalesce(max(rowid), 0) FROM memories').pluck(),
      defer: db.prepare<[number]>(`INSERT INTO ${TEXT_INDEX_DEFERRED} (above_rowid) VALUES (?)`),
      index: db.prepare<[number]>(`INSERT INTO memories_fts (rowid, content, context)
        SELECT rowid, content, context FROM memories WHERE rowid > ? ORDER BY rowid`),
      count: db.prepare<[number]>(`INSERT INTO namespace_text_stats (namespace_id, documents, tokens)
        ${rowsTextStatsSql('m.rowid > ?')}
        ON CONFLICT (namespace_id) DO UPDATE SET documents = documents + excluded.documents, tokens = tokens + excluded.tokens`),
      resume: db.prepare(`DELETE FROM ${TEXT_INDEX_DEFERRED}`),
    };
  }

  /** Inside the flush's transaction, before its first command: rows added from here on wait for `index`. */
  defer(): number {
    const above = this.s.lastRowid.get()!;
    this.s.defer.run(above);
    return above;
  }

  /** After the flush's last command, before COMMIT: indexes and counts the rows above `above`. */
  index(above: number): void {
    this.s.index.run(above);
    this.s.count.run(above);
    this.s.resume.run();
  }
}
