// The pool's half of IVF index upkeep: how far the index is from the vectors (status),
// training a new generation of centroids from a sample (train), and choosing cells for stale
// vectors (staleMoves). All reads on the pool's read-only connection; the writer applies the
// results (src/writer/sqlite/ivf-generations.ts). The main thread's VectorIndexer (src/core/jobs/ivf-upkeep.ts) decides what runs.
import type { Db } from '../../shared/db.js';
import { statementPerLimits } from '../../shared/literal-statements.js';
import { onConnection } from '../../shared/connection-statements.js';
import { float32FromBlob } from '../../shared/meta.js';
import type { VectorIndexStatus } from '../../shared/protocol/pool.js';
import type { VectorMove } from '../../shared/protocol/writer.js';
export type { VectorIndexStatus };
import { UNASSIGNED_CELL } from '../../shared/sql-schema.js';
import type { VectorCells } from './ivf-cells.js';
import { trainIndex, type Centroids } from '../ivf/kmeans.js';


export class VectorIndexMaintenance {
  private readonly s;

  constructor(db: Db, private readonly namespaceId: number, private readonly cells: VectorCells) {
    this.s = onConnection(db, VectorIndexMaintenance, () => ({
      vectors: db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM memories WHERE namespace_id = ? AND embedded = 1'),
      stale: db.prepare<[number, number], { n: number }>(
        'SELECT count(*) AS n FROM memories WHERE namespace_id = ? AND embedded = 1 AND vector_cell < ?'),
      rowids: db.prepare<[number], number>('SELECT rowid FROM memories WHERE namespace_id = ? AND embedded = 1').pluck(),
      embedding: db.prepare<[bigint], Buffer>('SELECT embedding FROM memory_vectors WHERE rowid = ?').pluck(),
      // CROSS JOIN keeps the memories index driving the loop (vec0 is only looked up by rowid);
      // LEFT, so a row marked embedded without a vector comes too (the writer repairs it).
      staleVectors: statementPerLimits<[number, number], { rowid: number; embedding: Buffer | null }>(db, (limit) => `
        SELECT m.rowid AS rowid, v.embedding AS embedding FROM memories m LEFT JOIN memory_vectors v ON v.rowid = m.rowid
        WHERE m.namespace_id = ? AND m.embedded = 1 AND m.vector_cell < ? LIMIT ${limit}`),
    }));
  }

  status(): VectorIndexStatus {
    const generations = this.cells.current();
    const newest = generations.at(-1);
    const vectors = this.s.vectors.get(this.namespaceId)!.n;
    return {
      vectors,
      stale: newest ? this.s.stale.get(this.namespaceId, newest.cells[0])!.n : 0,
      generations: generations.length,
      trainedOn: newest?.trainedOn ?? null,
      cells: newest?.centroids.count ?? 0,
    };
  }

  /** Centroids for the namespace as it is now: spherical k-means over a uniform sample. */
  train(): { trainedOn: number; centroids: Centroids } {
    return trainIndex(this.s.rowids.all(this.namespaceId), (rowid) => {
      const blob = this.s.embedding.get(BigInt(rowid));
      return blob ? float32FromBlob(blob) : null;
    });
  }

  /** Up to `limit` stale vectors with the newest generation's cell for each. */
  staleMoves(limit: number): VectorMove[] {
    const newest = this.cells.newest();
    if (!newest) return [];
    return this.s.staleVectors(limit).all(this.namespaceId, newest.cells[0])
      .map((row) => ({ rowid: row.rowid, cell: row.embedding ? this.cells.assign(float32FromBlob(row.embedding)) : UNASSIGNED_CELL }));
  }
}
