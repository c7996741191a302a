// Recall on a streaming replica with read-your-writes (issue 16): a real primary and a real
// `pg_basebackup -R` replica (test/support/postgres.ts). Replay is paused on the replica to make
// it stale on purpose, so each path — replica fresh, replica stale within the wait, replica
// stale past it — is shown by what the recall finds, not assumed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectReader, type Sql } from '../src/workers/postgres/client.js';
import { PostgresReadPort } from '../src/workers/postgres/read-port.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { POSTGRES_MIGRATIONS } from '../src/shared/postgres-schema.js';
import { postgresUnavailable, startPrimary, startReplica, type PgCluster } from './support/postgres.js';

const unavailable = postgresUnavailable();

describe('recall on a replica, read-your-writes', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let primary: PgCluster;
  let replica: PgCluster;
  let primarySql: Sql;
  let replicaSql: Sql;
  let namespaceId: number;
  let written = 0;

  /** A fact written on the primary; resolves to its content and the WAL position after its commit. */
  async function write(word: string): Promise<{ content: string; position: string }> {
    const content = `note ${++written} mentions the ${word}`;
    await primarySql`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence, stability,
      difficulty, last_access_at, created_at, extraction_tier) VALUES (${`m-${written}`}, ${namespaceId}, 'semantic', ${content}, ${content}, 0.8, 1, 5, 0, ${Date.now()}, 0)`;
    const [{ position }] = await primarySql<{ position: string }[]>`SELECT pg_current_wal_insert_lsn()::text AS position`;
    return { content, position };
  }

  const port = (maxLagMs: number) => new PostgresReadPort(primarySql, namespaceId, 'default', { minSimilarity: 0.2, replica: { sql: replicaSql, maxLagMs } });
  const found = async (reader: PostgresReadPort, word: string, after?: string) =>
    (await new RecallEngine(reader).recall({ query: word, entity: null, types: null, limit: 5, queryVector: null, after })).map((h) => h.row.content);

  before(async () => {
    primary = await startPrimary();
    primarySql = connectReader(primary.url);
    for (const migration of POSTGRES_MIGRATIONS) await primarySql.unsafe(migration);
    [{ id: namespaceId }] = await primarySql<{ id: number }[]>`INSERT INTO namespaces (name, created_at) VALUES ('default', 0) RETURNING id`;
    replica = await startReplica(primary);
    replicaSql = connectReader(`${replica.url}?target_session_attrs=prefer-standby`);
    const [{ standby }] = await replicaSql<{ standby: boolean }[]>`SELECT pg_is_in_recovery() AS standby`;
    assert.equal(standby, true, 'the fixture: the replica connection reaches the standby');
  });
  after(async () => {
    await replicaSql?.end();
    await primarySql?.end();
    await replica?.stop();
    await primary?.stop();
  });

  test('a fresh replica serves the recall and sees the write', async () => {
    const reader = port(2000);
    const { content, position } = await write('lighthouse');
    assert.deepEqual(await found(reader, 'lighthouse', position), [content]);
    assert.deepEqual(reader.source.served, { replica: 1, primary: 0 });
  });

  test('a stale replica past the wait: the primary serves, and the write is seen', async () => {
    await replicaSql`SELECT pg_wal_replay_pause()`;
    try {
      const reader = port(50);
      const { content, position } = await write('windmill');
      // Without a position the recall reads the paused replica, which does not have the write.
      assert.deepEqual(await found(reader, 'windmill'), []);
      assert.deepEqual(await found(reader, 'windmill', position), [content]);
      assert.deepEqual(reader.source.served, { replica: 1, primary: 1 });
    } finally {
      await replicaSql`SELECT pg_wal_replay_resume()`;
    }
  });

  test('a replica that catches up within the wait serves the recall', async () => {
    await replicaSql`SELECT pg_wal_replay_pause()`;
    const reader = port(10_000);
    const { content, position } = await write('aqueduct');
    const resumed = new Promise((resolve) => setTimeout(resolve, 100)).then(() => replicaSql`SELECT pg_wal_replay_resume()`);
    assert.deepEqual(await found(reader, 'aqueduct', position), [content]);
    await resumed;
    assert.deepEqual(reader.source.served, { replica: 1, primary: 0 });
  });

  test('without a replica every snapshot reads the primary', async () => {
    const reader = new PostgresReadPort(primarySql, namespaceId, 'default', { minSimilarity: 0.2 });
    const { content, position } = await write('belfry');
    assert.deepEqual(await found(reader, 'belfry', position), [content]);
    assert.deepEqual(reader.source.served, { replica: 0, primary: 0 });
  });
});
