// Vectors on PostgreSQL: the twin of WriteStore.attachVectors and of the IVF upkeep in
// ../ivf-generations.ts. A vector is a float32 bytea row in memory_vectors with its IVF cell;
// every cell the pool proposes is checked against the namespace's newest generation, and a vector
// computed against replaced centroids lands in the unassigned cell instead.
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import { blobOf } from '../../shared/meta.js';
import { UNASSIGNED_CELL } from '../../shared/sql-schema.js';
import type { Tx } from './connect.js';

export class PgVectorWriter {
  /** `dimensions`: the embedder's, recorded in meta at open (vectors-setup.ts). */
  constructor(private readonly namespaceId: number, private readonly dimensions: number, private readonly now: () => number = Date.now) {}

  /** The namespace's newest generation and its first cell (cells only grow). */
  private async newest(tx: Tx, namespaceId: number): Promise<{ generation: number; first: number } | undefined> {
    const [row] = await tx<{ generation: number; first: number }[]>`
      SELECT g.generation, (SELECT min(cell) FROM vector_cells c WHERE c.generation = g.generation) AS first
      FROM vector_generations g WHERE g.namespace_id = ${namespaceId} ORDER BY g.generation DESC LIMIT 1`;
    return row;
  }

  /** `proposed` if it is a cell of the namespace's newest generation, else the unassigned cell. */
  async cellFor(tx: Tx, namespaceId: number, proposed: number): Promise<number> {
    if (proposed === UNASSIGNED_CELL) return UNASSIGNED_CELL;
    const newest = await this.newest(tx, namespaceId);
    if (!newest || proposed < newest.first) return UNASSIGNED_CELL;
    const [cell] = await tx`SELECT 1 FROM vector_cells WHERE cell = ${proposed} AND generation = ${newest.generation}`;
    return cell ? proposed : UNASSIGNED_CELL;
  }

  /** Stores vectors computed in the pool; rows deleted or already embedded meanwhile are skipped. */
  async attachVectors(cmd: CommandOf<'attachVectors'>, tx: Tx): Promise<WriterResults['attachVectors']> {
    let attached = 0;
    for (const item of cmd.items) {
      const [row] = await tx<{ namespace_id: number }[]>`SELECT namespace_id FROM memories WHERE rowid = ${item.rowid} AND embedded = 0 FOR UPDATE`;
      if (!row) continue;
      const vector = item.vector instanceof Float32Array ? item.vector : Float32Array.from(item.vector as ArrayLike<number>);
      // SQLite's vec0 column refuses another length, failing the command: so does this.
      if (vector.length !== this.dimensions) throw new RangeError(`vector of ${vector.length} dimensions; the store holds ${this.dimensions}`);
      const cell = await this.cellFor(tx, row.namespace_id, item.cell);
      await tx`INSERT INTO memory_vectors (rowid, namespace_id, cell, embedding)
        VALUES (${item.rowid}, ${row.namespace_id}, ${cell}, ${blobOf(vector)})
        ON CONFLICT (rowid) DO UPDATE SET cell = excluded.cell, embedding = excluded.embedding`;
      await tx`UPDATE memories SET embedded = 1, vector_cell = ${cell} WHERE rowid = ${item.rowid}`;
      if (item.mentionedEntityIds.length > 0) {
        await tx`INSERT INTO memory_entities (memory_rowid, entity_id, relation)
          SELECT ${item.rowid}, e, 'mention' FROM unnest(${item.mentionedEntityIds}::text[]) AS e ON CONFLICT DO NOTHING`;
      }
      attached++;
    }
    // -1: the embedder rejected this text; it stays out of the backlog (a re-embed retries it).
    const unembeddable = cmd.unembeddable ?? [];
    if (unembeddable.length > 0) await tx`UPDATE memories SET embedded = -1 WHERE rowid = ANY(${unembeddable}::bigint[]) AND embedded = 0`;
    return { attached };
  }

  async install(cmd: CommandOf<'installVectorGeneration'>, tx: Tx): Promise<WriterResults['installVectorGeneration']> {
    const { count, dimensions, data } = cmd.centroids;
    if (count === 0) throw new RangeError('a vector index generation needs at least one centroid');
    const [created] = await tx<{ generation: number }[]>`INSERT INTO vector_generations (namespace_id, trained_on, created_at)
      VALUES (${this.namespaceId}, ${cmd.trainedOn}, ${this.now()}) RETURNING generation`;
    const generation = created!.generation;
    // In centroid order, so cell ids follow it as on SQLite (the pool maps centroid i to first + i).
    for (let c = 0; c < count; c++) {
      await tx`INSERT INTO vector_cells (generation, centroid) VALUES (${generation}, ${blobOf(data.subarray(c * dimensions, (c + 1) * dimensions))})`;
    }
    return { generation, cells: count };
  }

  /** Moves stale vectors into the cells the pool chose; a row marked embedded without a vector goes back to the backlog. */
  async move(cmd: CommandOf<'moveVectors'>, tx: Tx): Promise<WriterResults['moveVectors']> {
    const newest = await this.newest(tx, this.namespaceId);
    if (!newest) return { moved: 0, repaired: 0 };
    let moved = 0;
    let repaired = 0;
    for (const { rowid, cell } of cmd.moves) {
      const [placement] = await tx<{ vector_cell: number; has_vector: boolean }[]>`SELECT m.vector_cell, v.rowid IS NOT NULL AS has_vector
        FROM memories m LEFT JOIN memory_vectors v ON v.rowid = m.rowid
        WHERE m.rowid = ${rowid} AND m.namespace_id = ${this.namespaceId} AND m.embedded = 1`;
      if (!placement || placement.vector_cell >= newest.first) continue;
      if (!placement.has_vector) {
        await tx`UPDATE memories SET embedded = 0, vector_cell = ${UNASSIGNED_CELL} WHERE rowid = ${rowid}`;
        repaired++;
        continue;
      }
      if ((await this.cellFor(tx, this.namespaceId, cell)) === UNASSIGNED_CELL) continue;
      await tx`UPDATE memory_vectors SET cell = ${cell} WHERE rowid = ${rowid}`;
      await tx`UPDATE memories SET vector_cell = ${cell} WHERE rowid = ${rowid}`;
      moved++;
    }
    return { moved, repaired };
  }

  /** Drops generations older than the newest once no vector lives in their cells. */
  async retire(tx: Tx): Promise<WriterResults['retireVectorGenerations']> {
    const newest = await this.newest(tx, this.namespaceId);
    if (!newest) return { retired: 0 };
    const [inUse] = await tx`SELECT 1 FROM memories WHERE namespace_id = ${this.namespaceId} AND embedded = 1
      AND vector_cell > 0 AND vector_cell < ${newest.first} LIMIT 1`;
    if (inUse) return { retired: 0 };
    const retired = await tx`DELETE FROM vector_generations WHERE namespace_id = ${this.namespaceId} AND generation < ${newest.generation}`;
    return { retired: retired.count };
  }
}
