// Semantic relevance: cosine KNN over sqlite-vec. Filters (archived, types, entity) live in
// the memories table, so KNN over-fetches and filters; when a filter is selective (an
// entity, or too few survivors) an exact scan over only the filtered rows is used instead.
import type { Db } from '../../shared/db.js';
import { FILTER_SQL, filterParams, type RecallContext, type RetrievalSignal } from './signals.js';

/**
 * Neighbours much less similar than the best one are "merely nearby", not "about this".
 * Together with the embedder's absolute floor (embedding/identity.ts).
 */
export const RELATIVE_SIMILARITY = 0.75;
/** KNN fetches this many times the wanted depth, to survive filtering. */
const OVERFETCH = 3;
/** vec0 caps k; beyond it the exact filtered scan is used. */
const MAX_K = 4096;

export class VectorSignal implements RetrievalSignal {
  readonly name = 'vector';
  private readonly knn;
  private readonly exact;

  constructor(
    db: Db,
    private readonly namespaceId: number,
    /** Cosine similarity below which a neighbour is unrelated (the embedder's calibration). */
    private readonly minSimilarity: number,
    readonly weight = 1,
  ) {
    this.knn = db.prepare<Record<string, unknown>, Neighbour>(`
      WITH knn AS (
        SELECT rowid, distance FROM memory_vectors
        WHERE embedding MATCH @vector AND k = @k AND namespace_id = @nsKey
      )
      SELECT m.rowid AS rowid, knn.distance AS distance FROM knn JOIN memories m ON m.rowid = knn.rowid
      WHERE knn.distance <= @maxDistance AND ${FILTER_SQL}
      ORDER BY knn.distance LIMIT @depth`);
    this.exact = db.prepare<Record<string, unknown>, Neighbour>(`
      SELECT rowid, cosine_distance AS distance FROM (
        -- vec0 has a hidden column named "distance": compute under another name first.
        SELECT m.rowid AS rowid, vec_distance_cosine(v.embedding, @vector) AS cosine_distance
        FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid
        WHERE ${FILTER_SQL}
      )
      WHERE cosine_distance <= @maxDistance
      ORDER BY cosine_distance LIMIT @depth`);
  }

  retrieve(ctx: RecallContext): number[] {
    if (!ctx.queryVector) return [];
    const params = {
      ...filterParams(this.namespaceId, ctx.filter),
      vector: Buffer.from(ctx.queryVector.buffer, ctx.queryVector.byteOffset, ctx.queryVector.byteLength),
      depth: ctx.depth,
      maxDistance: 1 - this.minSimilarity,
    };
    // An entity's memories are few: scanning them exactly beats a namespace-wide KNN.
    if (ctx.filter.entityId !== null) return closeToBest(this.exact.all(params));
    const k = Math.min(MAX_K, ctx.depth * OVERFETCH);
    const hits = this.knn.all({ ...params, k, nsKey: BigInt(this.namespaceId) });
    const filtered = ctx.filter.types !== null;
    if (hits.length < ctx.depth && filtered) return closeToBest(this.exact.all(params));
    return closeToBest(hits);
  }
}

interface Neighbour {
  rowid: number;
  distance: number;
}

/** Row ids of the neighbours (nearest first) within RELATIVE_SIMILARITY of the nearest. */
function closeToBest(neighbours: Neighbour[]): number[] {
  if (neighbours.length === 0) return [];
  const floor = (1 - neighbours[0].distance) * RELATIVE_SIMILARITY;
  return neighbours.filter((n) => 1 - n.distance >= floor).map((n) => n.rowid);
}
