// A pool thread's view of a namespace's IVF cells in the SQLite file: the centroids, read once
// and re-read only when the writer installs or retires a generation. Recall asks which cells to
// scan; the embedding backfill and the indexer ask which cell a new vector belongs in.
import type { Db } from '../../shared/db.js';
import { prepareOnce } from '../../shared/connection-statements.js';
import { cellFor, group, probedCells, type CellRow, type Generation } from '../ivf/cells.js';
import { codeProbeCountFor } from '../ivf/kmeans.js';

export class VectorCells {
  private readonly fingerprint;
  private readonly rows;
  private seen = '';
  /** Oldest first; more than one only while the indexer moves vectors to the newest. */
  private generations: Generation[] = [];

  constructor(db: Db, private readonly namespaceId: number, private readonly probes = 0) {
    this.fingerprint = prepareOnce<[number], { top: number | null; cells: number }>(db, `
      SELECT max(c.cell) AS top, count(*) AS cells FROM vector_cells c
      JOIN vector_generations g ON g.generation = c.generation WHERE g.namespace_id = ?`);
    this.rows = prepareOnce<[number], CellRow>(db, `
      SELECT c.cell, c.generation, g.trained_on, c.centroid FROM vector_cells c
      JOIN vector_generations g ON g.generation = c.generation
      WHERE g.namespace_id = ? ORDER BY c.cell`);
  }

  /** The generations now installed, oldest first (re-read if the writer changed them). */
  current(): readonly Generation[] {
    const { top, cells } = this.fingerprint.get(this.namespaceId)!;
    const key = `${top}:${cells}`;
    if (key !== this.seen) {
      this.generations = group(this.rows.all(this.namespaceId));
      this.seen = key;
    }
    return this.generations;
  }

  /** Changes whenever the writer installs or retires a generation (as of the last `current()`). */
  get key(): string {
    return this.seen;
  }

  newest(): Generation | null {
    const generations = this.current();
    return generations.length > 0 ? generations[generations.length - 1] : null;
  }

  /**
   * Cells a query scans: the unassigned cell, plus the nearest cells of each generation
   * (a vector lives in exactly one cell; while the indexer moves vectors between
   * generations, either may hold a query's neighbours).
   */
  probe(query: Float32Array): number[] {
    return probedCells(this.current(), query, this.probes);
  }

  /** Cells a scan of the in-memory codes covers: more than `probe` (codes cost ~1/15 of vec0 a vector). */
  probeForCodes(query: Float32Array): number[] {
    const generations = this.current();
    const probes = this.probes > 0 ? this.probes : codeProbeCountFor(generations.at(-1)?.centroids.count ?? 0);
    return probedCells(generations, query, probes);
  }

  /** The newest generation's cell for a vector, or the unassigned cell when there is no index. */
  assign(vector: Float32Array): number {
    return cellFor(this.newest(), vector);
  }
}
