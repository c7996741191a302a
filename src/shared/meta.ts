// The `meta` key/value table (embedder identity, consolidation watermarks…) and the stored
// form of vectors: one reading and writing of each, shared by the writer and the CLI.
import type { Db } from './db.js';

export function readMeta(db: Db, key: string): string | null {
  return (db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key))?.value ?? null;
}

export function writeMeta(db: Db, key: string, value: string): void {
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
}

/** A vec0 float32 blob as plain numbers (snapshots, exports). */
export function vectorFromBlob(blob: Buffer): number[] {
  return Array.from(float32FromBlob(blob));
}

/** A stored float32 blob as a Float32Array (copied when the blob is not 4-byte aligned). */
export function float32FromBlob(blob: Buffer): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

/** A Float32Array as the blob SQLite and sqlite-vec store (no copy). */
export function blobOf(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}
