// Raw write limits: the memory INSERT (+ owner link) that `remember` performs, with the same
// indexes and FTS triggers (a database prepared by the service's migrations and seeded to
// the same size), straight through better-sqlite3 on this thread, synchronous=FULL as the
// service runs by default. Once with one transaction (one fsync) per row — what the service
// would get without group commit — and once with 64 rows per transaction, the batch group
// commit forms under 64 concurrent writers: the ceiling for POST /v1/remember.
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../src/shared/db.js';
import { INITIAL_DIFFICULTY, initialStability } from '../src/shared/fsrs.js';
import { contentKey } from '../src/shared/text.js';
import { Corpus } from './lib/corpus.js';
import { note } from './lib/progress.js';
import { entityCountFor } from './lib/seed.js';

export interface InsertLimit {
  rowsPerTransaction: number;
  rowsPerSecond: number;
  rows: number;
}

export function measureInsertLimits(dbPath: string, memories: number, seconds: number, batchSizes = [1, 64]): InsertLimit[] {
  const db = openDatabase(dbPath, { readonly: false, synchronous: 'FULL' });
  try {
    const corpus = new Corpus(99, entityCountFor(memories));
    const entities = db.prepare<[], { id: string; name: string }>('SELECT id, name FROM entities LIMIT 1000').all();
    const insert = db.prepare(`INSERT INTO memories
      (id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty,
       last_access_at, created_at, extraction_tier, entity_id, episode_id, seq, role)
      VALUES (?, 1, 'semantic', ?, ?, 0.9, ?, ?, ?, ?, 1, ?, NULL, NULL, NULL)`);
    const link = db.prepare("INSERT OR IGNORE INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, 'owner')");
    const one = () => {
      const owner = entities[Math.floor(corpus.next() * entities.length)];
      const fact = `${corpus.fact(owner.name)} (raw ${randomUUID().slice(0, 8)})`;
      const now = Date.now();
      const info = insert.run(randomUUID(), fact, contentKey(fact), initialStability('semantic', 0.9), INITIAL_DIFFICULTY, now, now, owner.id);
      link.run(info.lastInsertRowid, owner.id);
    };
    return batchSizes.map((size) => {
      const batch = db.transaction(() => {
        for (let i = 0; i < size; i++) one();
      });
      let rows = 0;
      const started = performance.now();
      while (performance.now() - started < seconds * 1000) {
        batch.immediate();
        rows += size;
      }
      const rowsPerSecond = rows / ((performance.now() - started) / 1000);
      note(`raw insert, ${size} row(s) per transaction, synchronous=FULL: ${Math.round(rowsPerSecond)} rows/s`);
      return { rowsPerTransaction: size, rowsPerSecond, rows };
    });
  } finally {
    db.close();
  }
}
