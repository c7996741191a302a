// A pool thread's view of a namespace's IVF cells: the centroids, read once and re-read only
// when the writer installs or retires a generation. Recall asks which cells to scan; the
// embedding backfill and the indexer ask which cell a new vector belongs in.
import type { Db } from '../../shared/db.js';
import { float32FromBlob } from '../../shared/meta.js';
import { UNASSIGNED_CELL } from '../../shared/sql-schema.js';
import { nearestCentroid, nearestCentroids, probeCountFor, type Centroids } from './kmeans.js';

export interface Generation {
  generation: number;
  trainedOn: number;
  /** Cell id of each centroid (ascending); the first is the generation's lowest id. */
  cells: number[];
  centroids: Centroids;
}

export interface CellRow {
  cell: number;
  generation: number;
  trained_on: number;
  centroid: Buffer;
}

export class VectorCells {
  private readonly fingerprint;
  private readonly rows;
  private seen = '';
  /** Oldest first; more than one only while the indexer moves vectors to the newest. */
  private generations: Generation[] = [];

  constructor(db: Db, private readonly namespaceId: number, private readonly probes = 0) {
    this.fingerprint = db.prepare<[number], { top: number | null; cells: number }>(`
      SELECT max(c.cell) AS top, count(*) AS cells FROM vector_cells c
      JOIN vector_generations g ON g.generation = c.generation WHERE g.namespace_id = ?`);
    this.rows = db.prepare<[number], CellRow>(`
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

  /** The newest generation's cell for a vector, or the unassigned cell when there is no index. */
  assign(vector: Float32Array): number {
    return cellFor(this.newest(), vector);
  }
}

/** The cells a query scans (see VectorCells.probe); `probes` 0 = chosen from the cell count. */
export function probedCells(generations: readonly Generation[], query: Float32Array, probes: number): number[] {
  const cells = [UNASSIGNED_CELL];
  for (const { cells: ids, centroids } of generations) {
    const n = probes > 0 ? probes : probeCountFor(centroids.count);
    for (const index of nearestCentroids(centroids, query, n)) cells.push(ids[index]);
  }
  return cells;
}

/** The newest generation's cell for a vector, or the unassigned cell when there is no index. */
export function cellFor(newest: Generation | null, vector: Float32Array): number {
  if (!newest || vector.length !== newest.centroids.dimensions) return UNASSIGNED_CELL;
  return newest.cells[nearestCentroid(newest.centroids, vector)];
}

/** Centroid rows (any backend) grouped into generations, oldest first. */
export function group(rows: CellRow[]): Generation[] {
  const byGeneration = new Map<number, CellRow[]>();
  for (const row of rows) {
    const list = byGeneration.get(row.generation) ?? [];
    list.push(row);
    byGeneration.set(row.generation, list);
  }
  return [...byGeneration.entries()].sort(([a], [b]) => a - b).map(([generation, members]) => {
    const dimensions = members[0].centroid.byteLength / 4;
    const data = new Float32Array(members.length * dimensions);
    members.forEach((row, i) => data.set(float32FromBlob(row.centroid), i * dimensions));
    return {
      generation,
      trainedOn: members[0].trained_on,
      cells: members.map((row) => row.cell),
      centroids: { count: members.length, dimensions, data },
    };
  });
}
