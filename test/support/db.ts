// Direct access to a running service's database file, for checks the API does not expose
// (extraction tier, archive flags) and for back-dating rows. Connections are short-lived
// and wait on the writer's lock instead of failing with SQLITE_BUSY.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { TestService } from './service.js';

export function withDb<T>(t: TestService, fn: (db: Database.Database) => T, options: { write?: boolean } = {}): T {
  const db = new Database(join(t.dir, 'memory.db'), { readonly: !options.write, fileMustExist: true });
  db.pragma('busy_timeout = 10000');
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Rows of one episode's extracted (non-episodic) memories. */
export function extractedRows(t: TestService, episodeId: string): { content: string; memory_type: string; confidence: number; extraction_tier: number }[] {
  return withDb(t, (db) => db.prepare(`SELECT content, memory_type, confidence, extraction_tier FROM memories
    WHERE episode_id = ? AND memory_type != 'episodic' ORDER BY rowid`).all(episodeId) as any);
}
