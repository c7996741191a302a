// Read-your-writes over a replica URL naming several hosts (target_session_attrs=prefer-standby):
// the pool's connections are spread over a fresh replica and one with replay paused, so a
// snapshot begun on another connection than the one whose replay was checked misses the write.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectReader } from '../src/workers/postgres/client.js';
import { PostgresReadPort } from '../src/workers/postgres/read-port.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { POSTGRES_MIGRATIONS } from '../src/shared/postgres-schema.js';
import { postgresUnavailable, startPrimary, startReplica } from './support/postgres.js';

const unavailable = postgresUnavailable();
const POOL = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'memory-runtime pool'";

describe('read-your-writes over two replica hosts, one stale', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  test('every recall carrying its write\'s position finds the write', async () => {
    const primary = await startPrimary();
    const primarySql = connectReader(primary.url);
    for (const migration of POSTGRES_MIGRATIONS) await primarySql.unsafe(migration);
    const [{ id: ns }] = await primarySql<{ id: number }[]>`INSERT INTO namespaces (name, created_at) VALUES ('default', 0) RETURNING id`;
    const fresh = await startReplica(primary);
    const stale = await startReplica(primary);
    const replicaSql = connectReader(`postgres://memrt@127.0.0.1:${fresh.port},127.0.0.1:${stale.port}/postgres?target_session_attrs=prefer-standby`);
    try {
      await stale.sql('SELECT pg_wal_replay_pause()');
      // Four connections on the first host; two are cut and reconnect to the next host, the stale one.
      await Promise.all(Array.from({ length: 4 }, () => replicaSql`SELECT pg_sleep(0.1)`));
      await fresh.sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'memory-runtime pool' ORDER BY pid LIMIT 2`);
      // A cut connection reports 57P01 on its next query, whichever round that falls in: every
      // round swallows it (the assertion below checks the spread actually happened).
      for (let round = 0; round < 3; round++) {
        await Promise.all(Array.from({ length: 4 }, () => replicaSql`SELECT pg_sleep(0.1)`.catch(() => {})));
      }
      assert.ok(Number((await stale.sql(POOL)).trim()) > 0, 'no pool connection reached the stale replica');
      const port = new PostgresReadPort(primarySql, ns, 'default', { minSimilarity: 0.2, replica: { sql: replicaSql, maxLagMs: 20 } });
      let missed = 0;
      for (let i = 0; i < 20; i++) {
        const word = `zebra${i}x`;
        await primarySql`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty, last_access_at, created_at, extraction_tier, occurred_at)
          VALUES (${'m' + i}, ${ns}, 'semantic', ${'note about ' + word}, ${'k' + i}, 0.8, 1, 5, 0, ${Date.now()}, 0, ${Date.now()})`;
        const [{ position }] = await primarySql<{ position: string }[]>`SELECT pg_current_wal_insert_lsn()::text AS position`;
        const recalls = await Promise.all(Array.from({ length: 6 }, () =>
          new RecallEngine(port).recall({ query: word, entity: null, types: null, limit: 5, queryVector: null, after: position })));
        missed += recalls.filter((hits) => hits.length === 0).length;
      }
      assert.equal(missed, 0);
      assert.ok(port.source.served.replica > 0 && port.source.served.primary > 0); // both paths were taken
    } finally {
      await stale.sql('SELECT pg_wal_replay_resume()').catch(() => {});
      await replicaSql.end();
      await primarySql.end();
      await stale.stop();
      await fresh.stop();
      await primary.stop();
    }
  });
});
