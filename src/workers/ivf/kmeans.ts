// The maths of the IVF (inverted file) vector index: spherical k-means over unit vectors, and
// the nearest centroids of a vector. Pure functions over Float32Arrays, shared by the pool
// (training, assignment, probing) and the scale benchmark's seeder.
//
// Why IVF: sqlite-vec 0.1.9 has no ANN index, and its exact scan costs ~0.3 µs per 256-d
// vector, so recall over 1M vectors took 0.6 s. Split into √N/2 cells around centroids, a
// query scans only the few cells nearest it (vec0 partition key `cell`): a few percent of
// the vectors, for a small loss of recall measured by `npm run bench:scale`.

/** `count` centroids of `dimensions` each, row after row, every row unit length. */
import type { Centroids } from '../../shared/protocol/writer.js';
export type { Centroids };

/** Cells for a namespace of `vectors` vectors: √N/2 (cells of ~2√N vectors), within bounds. */
export function cellCountFor(vectors: number): number {
  return Math.min(MAX_CELLS, Math.max(MIN_CELLS, Math.round(Math.sqrt(vectors) / 2)));
}
const MIN_CELLS = 16;
const MAX_CELLS = 2048;

/**
 * Cells each recall scans when the operator did not choose: at least 8, or 5% of the cells.
 * bench:scale measures the recall this keeps against an exact scan, and the sweep around it.
 * Cells of the 1M hash-256 corpus (docs/recall-at-scale.md), share of the exact top 50 found /
 * share of vectors scanned: 15 probes 82% / 3.9%, 25 probes 89% / 5.6%, 40 probes 93% / 8.8%,
 * 60 probes 96% / 13%; KNN time grows with the share scanned (~0.35 µs a vector in vec0).
 */
export function probeCountFor(cells: number): number {
  return Math.min(cells, Math.max(8, Math.ceil(cells * 0.05)));
}

/**
 * Cells each recall scans through the in-memory codes (sqlite/vector-codes.ts) when the operator
 * did not choose: the share of cells that finds ≥ 95% of the exact top 50 (bench:scale at 1M
 * hash-256, 500 cells: 10% 90.7%, 15% 92.7%, 20% 93.6%, 30% 96.2%, at ~0.87× the cost of vec0's
 * 25 default probes, which found 85.4%).
 */
export function codeProbeCountFor(cells: number): number {
  return Math.min(cells, Math.max(32, Math.ceil(cells * CODE_PROBE_SHARE)));
}
const CODE_PROBE_SHARE = 0.3;

/**
 * Training sample per cell: faiss suggests ≥ 30. With k-means++ seeds, 64 gave cells that find
 * 3–5 points more of the exact top 50 at the same share of vectors scanned than 32 with uniform
 * seeds (hash-256, 100k and 1M; docs/recall-at-scale.md). The cap bounds training at 1M: 101 s
 * on the loaded development box against 55 s before, on the idle-priority background lane.
 */
const SAMPLE_PER_CELL = 64;
const MAX_SAMPLE = 40_000;
const ITERATIONS = 10;

export function dot(a: Float32Array, b: Float32Array, offset: number, dimensions: number): number {
  // Four accumulators let V8 overlap the multiplies (about 2× a plain loop).
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  let d = 0;
  for (; d + 3 < dimensions; d += 4) {
    s0 += a[d] * b[offset + d];
    s1 += a[d + 1] * b[offset + d + 1];
    s2 += a[d + 2] * b[offset + d + 2];
    s3 += a[d + 3] * b[offset + d + 3];
  }
  for (; d < dimensions; d++) s0 += a[d] * b[offset + d];
  return s0 + s1 + s2 + s3;
}

/** Index of the centroid most similar (cosine) to `vector`. */
export function nearestCentroid(centroids: Centroids, vector: Float32Array): number {
  const { count, dimensions, data } = centroids;
  let best = -Infinity;
  let bestIndex = 0;
  for (let c = 0; c < count; c++) {
    const similarity = dot(vector, data, c * dimensions, dimensions);
    if (similarity > best) {
      best = similarity;
      bestIndex = c;
    }
  }
  return bestIndex;
}

/** Indexes of the `n` centroids most similar to `vector`, most similar first. */
export function nearestCentroids(centroids: Centroids, vector: Float32Array, n: number): number[] {
  const { count, dimensions, data } = centroids;
  const similarity = new Float64Array(count);
  for (let c = 0; c < count; c++) similarity[c] = dot(vector, data, c * dimensions, dimensions);
  const order = Array.from({ length: count }, (_, c) => c);
  order.sort((a, b) => similarity[b] - similarity[a]);
  return order.slice(0, Math.min(n, count));
}

/**
 * Spherical k-means (Lloyd's iterations, cosine similarity): `count` unit centroids for the
 * sample. Seeded, so the same sample gives the same cells. A cell left empty is re-seeded
 * with the sample vector its centroid fits worst, so no cell is wasted.
 */
export function trainCentroids(sample: Float32Array[], count: number, seed = 1): Centroids {
  if (sample.length === 0) throw new RangeError('k-means needs at least one vector');
  const dimensions = sample[0].length;
  const k = Math.min(count, sample.length);
  const random = xorshift(seed);
  const data = new Float32Array(k * dimensions);
  seedCentroids(sample, k, data, random);
  const centroids: Centroids = { count: k, dimensions, data };
  const assignment = new Int32Array(sample.length).fill(-1);
  const fit = new Float64Array(sample.length);
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    let changed = 0;
    for (let i = 0; i < sample.length; i++) {
      const c = nearestCentroid(centroids, sample[i]);
      fit[i] = dot(sample[i], data, c * dimensions, dimensions);
      if (assignment[i] !== c) {
        assignment[i] = c;
        changed++;
      }
    }
    if (changed === 0 && iteration > 0) break;
    recomputeCentroids(sample, assignment, fit, centroids);
  }
  return centroids;
}

/**
 * k-means++ seeding (cosine distance 1 − similarity): each next seed is drawn with probability
 * proportional to its distance from the nearest seed so far. Uniform seeds crowd the dense
 * regions and leave sparse ones without a cell of their own, sharing one with their neighbours.
 */
function seedCentroids(sample: Float32Array[], k: number, data: Float32Array, random: () => number): void {
  const dimensions = sample[0].length;
  const nearest = new Float64Array(sample.length).fill(Infinity);
  let pick = Math.floor(random() * sample.length);
  for (let c = 0; c < k; c++) {
    data.set(sample[pick], c * dimensions);
    let total = 0;
    for (let i = 0; i < sample.length; i++) {
      const distance = Math.max(0, 1 - dot(sample[i], data, c * dimensions, dimensions));
      if (distance < nearest[i]) nearest[i] = distance;
      total += nearest[i];
    }
    // Every vector already coincides with a seed (duplicates): any vector will do.
    if (total === 0) {
      pick = Math.floor(random() * sample.length);
      continue;
    }
    let target = random() * total;
    pick = sample.length - 1;
    for (let i = 0; i < sample.length; i++) {
      target -= nearest[i];
      if (target <= 0) {
        pick = i;
        break;
      }
    }
  }
}

function recomputeCentroids(sample: Float32Array[], assignment: Int32Array, fit: Float64Array, centroids: Centroids): void {
  const { count, dimensions, data } = centroids;
  const sums = new Float64Array(count * dimensions);
  const members = new Int32Array(count);
  for (let i = 0; i < sample.length; i++) {
    const offset = assignment[i] * dimensions;
    const vector = sample[i];
    for (let d = 0; d < dimensions; d++) sums[offset + d] += vector[d];
    members[assignment[i]]++;
  }
  // Worst-fitting vectors first: the seeds for empty cells.
  const worst = Array.from({ length: sample.length }, (_, i) => i).sort((a, b) => fit[a] - fit[b]);
  let nextWorst = 0;
  for (let c = 0; c < count; c++) {
    const offset = c * dimensions;
    if (members[c] === 0) {
      data.set(sample[worst[nextWorst++ % worst.length]], offset);
      continue;
    }
    let norm = 0;
    for (let d = 0; d < dimensions; d++) norm += sums[offset + d] * sums[offset + d];
    norm = Math.sqrt(norm);
    // Members that cancel out exactly leave the old centroid in place.
    if (norm === 0) continue;
    for (let d = 0; d < dimensions; d++) data[offset + d] = sums[offset + d] / norm;
  }
}

/**
 * A generation of centroids for a namespace whose vectors are `rowids`: spherical k-means over
 * a uniform sample of them, read through `vectorOf` (null: the vector vanished meanwhile).
 */
export function trainIndex(rowids: readonly number[], vectorOf: (rowid: number) => Float32Array | null): { trainedOn: number; centroids: Centroids } {
  const sample = trainingSample(rowids).flatMap((rowid) => {
    const vector = vectorOf(rowid);
    return vector ? [vector] : [];
  });
  return { trainedOn: rowids.length, centroids: trainCentroids(sample, cellCountFor(rowids.length)) };
}

/** The rowids whose vectors train the index (deterministic: a network adapter reads them first). */
export function trainingSample(rowids: readonly number[]): number[] {
  const cells = cellCountFor(rowids.length);
  return sampleIndexes(rowids.length, Math.min(MAX_SAMPLE, cells * SAMPLE_PER_CELL), rowids.length).map((i) => rowids[i]);
}

/** Picks `n` of `total` indexes, spread uniformly, deterministically for a given seed. */
export function sampleIndexes(total: number, n: number, seed = 1): number[] {
  if (n >= total) return Array.from({ length: total }, (_, i) => i);
  const random = xorshift(seed);
  const chosen = new Set<number>();
  while (chosen.size < n) chosen.add(Math.floor(random() * total));
  return [...chosen].sort((a, b) => a - b);
}

function xorshift(seed: number): () => number {
  let state = (seed >>> 0) || 0x9e3779b9;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 4294967296;
  };
}
