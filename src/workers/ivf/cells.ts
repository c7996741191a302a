// IVF cells over any backend: centroid rows grouped into generations, the cells a query scans,
// the cell a new vector belongs in. Each adapter reads the rows its own way (SQLite:
// sqlite/ivf-cells.ts; PostgreSQL: postgres/vectors.ts).
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

/** The cells a query scans (the unassigned cell, and each generation's nearest); `probes` 0 = chosen from the cell count. */
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
