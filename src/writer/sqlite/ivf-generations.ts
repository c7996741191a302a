// The writer's half of the IVF vector index: installs a generation of centroids trained in the
// pool, moves vectors into their cells, and retires a generation once nothing lives in it.
// Every cell the pool proposes is checked here against the newest generation, so a vector
// computed against centroids that were replaced meanwhile lands in the unassigned cell (which
// every recall scans and the indexer empties) instead of in a cell no query probes.
import type { Db } from '../../shared/db.js';
import type { CommandOf, WriterResults } from '../../shared/messages.js';
import { blobOf } from '../../shared/meta.js';
import { INSERT_VECTOR_SQL, UNASSIGNED_CELL } from '../../shared/sql-schema.js';

export class VectorIndexWriter {
  private readonly s;

  constructor(db: Db, private readonly namespaceId: number, private readonly now: () => number = Date.now) {
    this.s = {
      newest: db.prepare<[number], { generation: number; first: number }>(`
        SELECT g.generation, (SELECT min(cell) FROM vector_cells c WHERE c.generation = g.generation) AS first
        FROM vector_generations g WHERE g.namespace_id = ? ORDER BY g.generation DESC LIMIT 1`),
      cellIn: db.prepare<[number, number], { cell: number }>('SELECT cell FROM vector_cells WHERE cell = ? AND generation = ?'),
      insertGeneration: db.prepare('INSERT INTO vector_generations (namespace_id, trained_on, created_at) VALUES (?, ?, ?)'),
      insertCell: db.prepare('INSERT INTO vector_cells (generation, centroid) VALUES (?, ?)'),
      placement: db.prepare<[number, number], { vector_cell: number }>(
        'SELECT vector_cell FROM memories WHERE rowid = ? AND namespace_id = ? AND embedded = 1'),
      embedding: db.prepare<[bigint], { embedding: Buffer }>('SELECT embedding FROM memory_vectors WHERE rowid = ?'),
      deleteVector: db.prepare('DELETE FROM memory_vectors WHERE rowid = ?'),
      insertVector: db.prepare(INSERT_VECTOR_SQL),
      setCell: db.prepare('UPDATE memories SET vector_cell = ? WHERE rowid = ?'),
      unembed: db.prepare(`UPDATE memories SET embedded = 0, vector_cell = ${UNASSIGNED_CELL} WHERE rowid = ?`),
      olderInUse: db.prepare<[number, number], { n: number }>(`SELECT count(*) AS n FROM memories
        WHERE namespace_id = ? AND embedded = 1 AND vector_cell > 0 AND vector_cell < ?`),
      retire: db.prepare('DELETE FROM vector_cells WHERE generation IN (SELECT generation FROM vector_generations WHERE namespace_id = ? AND generation < ?)'),
      retireGenerations: db.prepare('DELETE FROM vector_generations WHERE namespace_id = ? AND generation < ?'),
    };
  }

  /** `proposed` if it is a cell of the namespace's newest generation, else the unassigned cell. */
  cellFor(namespaceId: number, proposed: number): number {
    if (proposed === UNASSIGNED_CELL) return UNASSIGNED_CELL;
    const newest = this.s.newest.get(namespaceId);
    if (!newest || proposed < newest.first) return UNASSIGNED_CELL;
    return this.s.cellIn.get(proposed, newest.generation) ? proposed : UNASSIGNED_CELL;
  }

  install(cmd: CommandOf<'installVectorGeneration'>): WriterResults['installVectorGeneration'] {
    const { count, dimensions, data } = cmd.centroids;
    if (count === 0) throw new RangeError('a vector index generation needs at least one centroid');
    const generation = Number(this.s.insertGeneration.run(this.namespaceId, cmd.trainedOn, this.now()).lastInsertRowid);
    for (let c = 0; c < count; c++) this.s.insertCell.run(generation, blobOf(data.subarray(c * dimensions, (c + 1) * dimensions)));
    return { generation, cells: count };
  }

  /**
   * Moves stale vectors into the cells the pool chose; skips any that changed meanwhile. A row
   * marked embedded without a vector goes back to the embedding backlog (`repaired`).
   */
  move(cmd: CommandOf<'moveVectors'>): WriterResults['moveVectors'] {
    const newest = this.s.newest.get(this.namespaceId);
    if (!newest) return { moved: 0, repaired: 0 };
    let moved = 0;
    let repaired = 0;
    for (const { rowid, cell } of cmd.moves) {
      const placement = this.s.placement.get(rowid, this.namespaceId);
      // Deleted, or already placed by this generation (the backfill, or an earlier move).
      if (!placement || placement.vector_cell >= newest.first) continue;
      const key = BigInt(rowid);
      const stored = this.s.embedding.get(key);
      if (!stored) {
        // Marked embedded but has no vector (a file restored so): back to the embedding backlog.
        this.s.unembed.run(rowid);
        repaired++;
        continue;
      }
      if (this.cellFor(this.namespaceId, cell) === UNASSIGNED_CELL) continue;
      this.s.deleteVector.run(key);
      this.s.insertVector.run(key, BigInt(this.namespaceId), BigInt(cell), stored.embedding);
      this.s.setCell.run(cell, rowid);
      moved++;
    }
    return { moved, repaired };
  }

  /** Drops generations older than the newest once no vector lives in their cells. */
  retire(): WriterResults['retireVectorGenerations'] {
    const newest = this.s.newest.get(this.namespaceId);
    if (!newest) return { retired: 0 };
    if (this.s.olderInUse.get(this.namespaceId, newest.first)!.n > 0) return { retired: 0 };
    this.s.retire.run(this.namespaceId, newest.generation);
    return { retired: this.s.retireGenerations.run(this.namespaceId, newest.generation).changes };
  }
}
