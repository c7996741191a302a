// Raw PostgreSQL doing what the service asks of it, without the service: the baselines that
// bench:writes, bench:pg-reads and bench:scale --postgres measure the PostgreSQL adapter against.
// - Writes: the memory row + owner link `remember` inserts (same columns, indexes and GIN), a
//   given number of rows per transaction, statement by statement or as one multi-row INSERT.
// - Reads: the two queries a recall's signals stand on — ts_rank_cd over the whole OR match of
//   the query's terms (no term selection), and reading the probed IVF cells' vectors with the
//   dot product done in JS (no cell cache).
import { randomUUID } from 'node:crypto';
import { float32FromBlob } from '../../src/shared/meta.js';
import { INITIAL_DIFFICULTY, initialStability } from '../../src/shared/fsrs.js';
import { contentKey } from '../../src/shared/text.js';
import type { Sql } from '../../src/workers/postgres/client.js';
import type { Corpus } from './corpus.js';

export interface RawWriter {
  /** One transaction of `rows` memories, statement by statement, as the adapter sends them. */
  perStatement(rows: number): Promise<number>;
  /** One transaction of `rows` memories as one multi-row INSERT … SELECT FROM unnest. */
  multiRow(rows: number): Promise<number>;
}

/** Raw inserts into the namespace and among the entities already in the database at `sql`. */
export async function rawWriter(sql: Sql, corpus: Corpus): Promise<RawWriter> {
  const [{ ns }] = (await sql`SELECT id AS ns FROM namespaces ORDER BY id LIMIT 1`) as unknown as [{ ns: number }];
  const owners = (await sql`SELECT id, name FROM entities ORDER BY id LIMIT 1000`) as unknown as { id: string; name: string }[];
  if (owners.length === 0) throw new Error('raw writes need entities in the database');
  const stability = initialStability('semantic', 0.9);
  const row = () => {
    const owner = owners[Math.floor(corpus.next() * owners.length)]!;
    const fact = `${corpus.fact(owner.name)} (raw ${randomUUID().slice(0, 8)})`;
    return { id: randomUUID(), fact, key: contentKey(fact), owner: owner.id, now: Date.now() };
  };
  return {
    async perStatement(rows) {
      await sql.begin(async (tx) => {
        for (let i = 0; i < rows; i++) {
          const r = row();
          const [m] = await tx`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence,
            stability, difficulty, last_access_at, created_at, extraction_tier, entity_id, occurred_at)
            VALUES (${r.id}, ${ns}, 'semantic', ${r.fact}, ${r.key}, 0.9, ${stability}, ${INITIAL_DIFFICULTY}, ${r.now}, ${r.now}, 1, ${r.owner}, ${r.now}) RETURNING rowid`;
          await tx`INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (${m!.rowid as number}, ${r.owner}, 'owner')`;
        }
      });
      return rows;
    },
    async multiRow(rows) {
      const batch = Array.from({ length: rows }, row);
      const now = Date.now();
      await sql.begin(async (tx) => {
        await tx`WITH m AS (INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence,
            stability, difficulty, last_access_at, created_at, extraction_tier, entity_id, occurred_at)
          SELECT id, ${ns}, 'semantic', fact, key, 0.9, ${stability}, ${INITIAL_DIFFICULTY}, ${now}, ${now}, 1, owner, ${now}
          FROM unnest(${batch.map((r) => r.id)}::text[], ${batch.map((r) => r.fact)}::text[], ${batch.map((r) => r.key)}::text[], ${batch.map((r) => r.owner)}::text[]) AS u(id, fact, key, owner)
          RETURNING rowid, entity_id)
          INSERT INTO memory_entities (memory_rowid, entity_id, relation) SELECT rowid, entity_id, 'owner' FROM m`;
      });
      return rows;
    },
  };
}

/** ts_rank_cd over the whole OR match of `terms`, top `depth` (the service selects terms first). */
export async function rawLexical(sql: Sql, terms: string[], depth: number): Promise<unknown[]> {
  return [...await sql`
    WITH q AS (SELECT string_agg('(' || plainto_tsquery('memrt_english', t)::text || ')', ' | ')::tsquery AS q FROM unnest(${terms}::text[]) t
      WHERE plainto_tsquery('memrt_english', t)::text <> '')
    SELECT m.rowid, ts_rank_cd('{0.3,0,0,1}', m.search, q.q) AS r FROM memories m, q WHERE m.search @@ q.q ORDER BY r DESC LIMIT ${depth}`];
}

/** Reads every vector of the probed `cells` and scores it in JS, top `depth` (the service caches cells). */
export async function rawNearest(sql: Sql, namespaceId: number, cells: number[], query: Float32Array, depth: number): Promise<{ rowid: number; dot: number }[]> {
  const rows = (await sql`SELECT rowid, embedding FROM memory_vectors
    WHERE namespace_id = ${namespaceId} AND cell = ANY(${cells}::bigint[])`) as unknown as { rowid: number; embedding: Buffer }[];
  const scored = rows.map((row) => {
    const v = float32FromBlob(row.embedding);
    let dot = 0;
    for (let k = 0; k < v.length; k++) dot += v[k] * query[k];
    return { rowid: Number(row.rowid), dot };
  });
  return scored.sort((a, b) => b.dot - a.dot).slice(0, depth);
}
