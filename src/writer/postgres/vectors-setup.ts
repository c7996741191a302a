// The PostgreSQL counterpart of ../sqlite/vector-table.ts: the embedder's id and dimension are recorded in meta;
// a change either re-embeds everything (SERVICE_REEMBED=true) or stops start-up, and the IVF scan
// index is created for the dimension (postgresVectorIndexSql).
import type { EmbedderIdentity } from '../../shared/embedder-identity.js';
import { postgresVectorIndexSql } from '../../shared/postgres-schema.js';
import { EmbedderMismatchError } from '../commands/embedder-mismatch.js';
import type { Sql } from './connect.js';

type Identity = Pick<EmbedderIdentity, 'id' | 'dimensions'>;

/** Returns true when every memory must be (re-)embedded. */
export async function preparePostgresVectors(sql: Sql, configured: Identity, reembedOnChange: boolean): Promise<boolean> {
  return sql.begin(async (tx) => {
    const meta = new Map((await tx<{ key: string; value: string }[]>`
      SELECT key, value FROM meta WHERE key IN ('embedder', 'embedding_dimensions') FOR UPDATE`).map((r) => [r.key, r.value]));
    const storedId = meta.get('embedder');
    const storedDims = Number(meta.get('embedding_dimensions') ?? 0);
    const same = storedId === configured.id && storedDims === configured.dimensions;
    if (storedId !== undefined && !same && !reembedOnChange) {
      throw new EmbedderMismatchError({ id: storedId, dimensions: storedDims }, configured);
    }
    const reset = storedId !== undefined && !same;
    if (reset) {
      await tx`DROP INDEX IF EXISTS memory_vectors_by_cell`;
      await tx`DELETE FROM memory_vectors`;
      await tx`UPDATE memories SET embedded = 0, vector_cell = 0 WHERE embedded != 0 OR vector_cell != 0`;
      await tx`DELETE FROM vector_cells`;
      await tx`DELETE FROM vector_generations`;
    }
    await tx.unsafe(postgresVectorIndexSql(configured.dimensions));
    await tx`INSERT INTO meta (key, value) VALUES ('embedder', ${configured.id}), ('embedding_dimensions', ${String(configured.dimensions)})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
    return reset;
  });
}
