// The vector table is created for the configured embedder's dimension, and the embedder's
// id is recorded beside it. Vectors from different embedders are not comparable, so a
// change either re-embeds everything (SERVICE_REEMBED=true) or stops start-up.
import type { Db } from '../../shared/db.js';
import { RESET_VECTOR_INDEX_SQL, vectorTableSql } from '../../shared/sql-schema.js';
import { readMeta, writeMeta } from '../../shared/meta.js';
import { EmbedderMismatchError } from '../commands/embedder-mismatch.js';

type EmbedderIdentity = Pick<import('../../shared/embedder-identity.js').EmbedderIdentity, 'id' | 'dimensions'>;

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
      db.exec(RESET_VECTOR_INDEX_SQL);
    } else {
      addCellPartition(db);
    }
    db.exec(vectorTableSql(configured.dimensions));
    writeMeta(db, 'embedder', configured.id);
    writeMeta(db, 'embedding_dimensions', String(configured.dimensions));
    return reset;
  }).immediate();
}

/**
 * Databases made before the IVF index (schema migration 5) have a vector table without the
 * `cell` partition key. vec0 cannot add a column, so the vectors are copied into a new table,
 * all in cell 0 (unassigned); the indexer assigns them to cells once the service runs. Run by
 * the writer at start and by the offline commands (restore, import) before they write vectors.
 */
export function addCellPartition(db: Db): void {
  const table = vectorTableShape(db);
  if (!table || table.cellPartition) return;
  const { dimensions } = table;
  db.exec(`CREATE TEMP TABLE vectors_before_cells AS SELECT rowid AS memory_rowid, namespace_id, embedding FROM memory_vectors;
    DROP TABLE memory_vectors;
    ${vectorTableSql(dimensions)};
    INSERT INTO memory_vectors (rowid, namespace_id, cell, embedding)
      SELECT memory_rowid, namespace_id, 0, embedding FROM vectors_before_cells;
    UPDATE memories SET vector_cell = 0 WHERE vector_cell != 0;
    -- Restores by earlier versions could mark a row embedded without giving it a vector:
    -- back to the embedding backlog with it.
    UPDATE memories SET embedded = 0 WHERE embedded = 1
      AND rowid NOT IN (SELECT memory_rowid FROM vectors_before_cells);
    DROP TABLE vectors_before_cells;`);
}

/** The existing vector table's shape, read back from its definition (null: there is none yet). */
export function vectorTableShape(db: Db): { dimensions: number; cellPartition: boolean } | null {
  const table = db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'memory_vectors'").get();
  const dimensions = table && /float\[(\d+)\]/i.exec(table.sql);
  if (!table || !dimensions) return null;
  return { dimensions: Number(dimensions[1]), cellPartition: /\bcell\b/.test(table.sql) };
}
