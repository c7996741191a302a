// Rows written straight into a test database file, for signal and writer tests that need exact
// shapes or thousands of rows: memories with the columns the writer fills, and unit vectors.
import type { Db } from '../../src/shared/db.js';
import type { MemoryType } from '../../src/shared/schemas.js';

export interface MemoryFields {
  id: string;
  content: string;
  type?: MemoryType;
  entityId?: string | null;
  embedded?: 0 | 1;
  archived?: 0 | 1;
}

/** An insert prepared once for the namespace; each call stores one memory and returns its rowid. */
export function memoryInserter(db: Db, namespaceId: number): (fields: MemoryFields) => number {
  const insert = db.prepare(`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence,
    stability, difficulty, last_access_at, created_at, extraction_tier, entity_id, embedded, archived)
    VALUES (?, ?, ?, ?, ?, 1, 1, 5, 0, 0, 1, ?, ?, ?)`);
  return ({ id, content, type = 'semantic', entityId = null, embedded = 0, archived = 0 }) =>
    Number(insert.run(id, namespaceId, type, content, content, entityId, embedded, archived).lastInsertRowid);
}

export function unit(values: number[]): Float32Array {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (v) => v / norm);
}
