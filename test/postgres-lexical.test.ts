// PostgreSQL lexical reads on a table never analysed (reltuples = -1, as on a new node before
// autovacuum's first ANALYZE): term rarity must still come from the real row count.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectReader, type Sql } from '../src/workers/postgres/client.js';
import { countTerms } from '../src/workers/postgres/lexical.js';
import { POSTGRES_MIGRATIONS } from '../src/shared/postgres-schema.js';
import { postgresUnavailable, startPrimary, type PgCluster } from './support/postgres.js';

const unavailable = postgresUnavailable();

describe('PostgreSQL term rarity before the first ANALYZE', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let primary: PgCluster;
  let sql: Sql;
  let ns: number;
  before(async () => {
    primary = await startPrimary();
    sql = connectReader(primary.url);
    for (const migration of POSTGRES_MIGRATIONS) await sql.unsafe(migration);
    [{ id: ns }] = await sql<{ id: number }[]>`INSERT INTO namespaces (name, created_at) VALUES ('default', 0) RETURNING id`;
    // Fewer rows than autovacuum's analyse threshold (50), so the estimate stays unknown.
    for (let i = 0; i < 10; i++) {
      const content = i === 0 ? 'the harbour keeps a lighthouse' : `the harbour keeps boat ${i}`;
      await sql`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty, last_access_at, created_at, extraction_tier, occurred_at)
        VALUES (${'m' + i}, ${ns}, 'semantic', ${content}, ${'k' + i}, 0.8, 1, 5, 0, ${Date.now()}, 0, ${Date.now()})`;
    }
  });
  after(async () => {
    await sql?.end();
    await primary?.stop();
  });

  test('a term in 1 of 10 rows gets the BM25 idf of 1 in 10, one in every row nearly none', async () => {
    const [{ reltuples }] = await sql<{ reltuples: number }[]>`SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass`;
    assert.ok(reltuples < 0, 'the table was analysed: this test needs it not to be');
    const idf = (n: number, matches: number) => Math.log(1 + (n - matches + 0.5) / (matches + 0.5));
    const [lighthouse, harbour] = await sql.begin((tx) => countTerms(tx, ns, ['lighthouse', 'harbour']));
    assert.deepEqual([lighthouse.matches, harbour.matches], [1, 10]);
    assert.ok(Math.abs(lighthouse.idf - idf(10, 1)) < 1e-9, `idf ${lighthouse.idf}`);
    assert.ok(Math.abs(harbour.idf - idf(10, 10)) < 1e-9, `idf ${harbour.idf}`);
  });
});
