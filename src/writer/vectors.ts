// The vector table is created for the configured embedder's dimension, and the embedder's
// id is recorded beside it. Vectors from different embedders are not comparable, so a
// change either re-embeds everything (SERVICE_REEMBED=true) or stops start-up.
import type { Db } from '../shared/db.js';
import { vectorTableSql } from '../shared/sql-schema.js';

type EmbedderIdentity = Pick<import('../workers/embedding/identity.js').EmbedderIdentity, 'id' | 'dimensions'>;

export class EmbedderMismatchError extends Error {
  constructor(stored: EmbedderIdentity, configured: EmbedderIdentity) {
    super(
      `the database holds vectors from embedder ${stored.id} (${stored.dimensions}-d) but ${configured.id} ` +
        `(${configured.dimensions}-d) is configured: set SERVICE_EMBEDDER back, or start once with ` +
        'SERVICE_REEMBED=true to re-embed every memory with the new embedder',
    );
    this.name = 'EmbedderMismatchError';
  }
}

function meta(db: Db, key: string): string | undefined {
  return (db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
}

function setMeta(db: Db, key: string, value: string): void {
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
}

/** Returns true when every memory must be (re-)embedded. */
export function prepareVectorTable(db: Db, configured: EmbedderIdentity, reembedOnChange: boolean): boolean {
  const storedId = meta(db, 'embedder');
  const storedDims = Number(meta(db, 'embedding_dimensions') ?? 0);
  const same = storedId === configured.id && storedDims === configured.dimensions;
  if (storedId !== undefined && !same && !reembedOnChange) {
    throw new EmbedderMismatchError({ id: storedId, dimensions: storedDims }, configured);
  }
  return db.transaction(() => {
    const reset = storedId !== undefined && !same;
    if (reset) {
      db.exec('DROP TABLE IF EXISTS memory_vectors');
      db.exec('UPDATE memories SET embedded = 0');
    }
    db.exec(vectorTableSql(configured.dimensions));
    setMeta(db, 'embedder', configured.id);
    setMeta(db, 'embedding_dimensions', String(configured.dimensions));
    return reset;
  }).immediate();
}
