// The vector table is created for the configured embedder's dimension, and the embedder's
// id is recorded beside it. Vectors from different embedders are not comparable, so a
// change either re-embeds everything (SERVICE_REEMBED=true) or stops start-up.
import type { Db } from '../shared/db.js';
import { vectorTableSql } from '../shared/sql-schema.js';
import { readMeta, writeMeta } from '../shared/meta.js';

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


/** Returns true when every memory must be (re-)embedded. */
export function prepareVectorTable(db: Db, configured: EmbedderIdentity, reembedOnChange: boolean): boolean {
  const storedId = readMeta(db, 'embedder') ?? undefined;
  const storedDims = Number(readMeta(db, 'embedding_dimensions') ?? 0);
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
    writeMeta(db, 'embedder', configured.id);
    writeMeta(db, 'embedding_dimensions', String(configured.dimensions));
    return reset;
  }).immediate();
}
