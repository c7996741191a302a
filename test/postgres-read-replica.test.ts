// Recall on a streaming replica with read-your-writes (issue 16): a real primary and a real
// `pg_basebackup -R` replica (test/support/postgres.ts). Replay is paused on the replica to make
// it stale on purpose, so each path — replica fresh, replica stale within the wait, replica
// stale past it — is shown by what the recall finds, not assumed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { connectReader, type Sql } from '../src/workers/postgres/client.js';
import { PostgresReadPort } from '../src/workers/postgres/read-port.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { POSTGRES_MIGRATIONS } from '../src/shared/postgres-schema.js';
import { postgresUnavailable, startPrimary, startReplica, type PgCluster } from './support/postgres.js';
import { get, post, startTestService } from './support/service.js';

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
      difficulty, last_access_at, created_at, extraction_tier, occurred_at) VALUES (${`m-${written}`}, ${namespaceId}, 'semantic', ${content}, ${content}, 0.8, 1, 5, 0, ${Date.now()}, 0, ${Date.now()})`;
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

/** PostgreSQL's Terminate message: what a client sends to end its session ('X', length 4). */
const TERMINATE = Buffer.from([0x58, 0, 0, 0, 4]);

/**
 * A TCP relay in front of a server that remembers, for each client connection, whether the
 * client's last bytes before it closed were a Terminate message (a goodbye) or not (a dropped socket).
 */
async function goodbyeRecorder(upstreamPort: number): Promise<{ port: number; ended: { name: string; goodbye: boolean }[]; close(): Promise<void> }> {
  const ended: { name: string; goodbye: boolean }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    let tail = Buffer.alloc(0);
    let name = '';
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
    }
    client.on('data', (chunk: Buffer) => {
      // The start-up message names the session (application_name\0value\0).
      name ||= /application_name\0([^\0]*)\0/.exec(chunk.toString('latin1'))?.[1] ?? '';
      tail = Buffer.concat([tail, chunk]).subarray(-TERMINATE.length);
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.once('close', () => {
      ended.push({ name, goodbye: tail.equals(TERMINATE) });
      upstream.destroy();
    });
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    ended,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('pool threads end their PostgreSQL sessions when the service stops', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let primary: PgCluster;
  let replica: PgCluster;

  before(async () => {
    primary = await startPrimary();
    await primary.sql('CREATE DATABASE pool_close');
    replica = await startReplica(primary);
  });
  after(async () => {
    await replica?.stop();
    await primary?.stop();
  });

  /** The pool's sessions on this server for the test's database (the test's own connect elsewhere). */
  const poolSessions = async (cluster: PgCluster) => Number(await cluster.sql(`SELECT count(*) FROM pg_stat_activity
    WHERE application_name = 'memory-runtime pool' AND datname = 'pool_close'`));

  test('stop ends every session with a goodbye: none is left on the primary or the replica', async () => {
    // The primary through the relay (every connection of the service), the replica direct.
    const relay = await goodbyeRecorder(primary.port);
    try {
      const t = await startTestService({
        SERVICE_EMBEDDER: 'hash',
        SERVICE_DATABASE_URL: `postgres://memrt@127.0.0.1:${relay.port}/pool_close`,
        SERVICE_READ_DATABASE_URL: `${replica.url.replace(/\/postgres$/, '/pool_close')}?target_session_attrs=prefer-standby`,
      });
      try {
        // Reads on both sides, from several threads: sessions open on each server.
        assert.equal((await post(t.base, '/v1/remember', { entity: 'pooler', fact: 'pooler keeps a tidy desk' })).status, 201);
        for (let i = 0; i < 4; i++) assert.equal((await post(t.base, '/v1/recall', { query: 'tidy desk' })).status, 200);
        assert.equal((await get(t.base, '/v1/stats')).status, 200);
        assert.ok((await poolSessions(primary)) > 0 && (await poolSessions(replica)) > 0, 'the fixture: the pool has sessions on both');
      } finally {
        await t.close();
      }
      // A backend leaves pg_stat_activity a moment after it has read the Terminate: looked at until
      // gone (a session left open would stay until the 10 s bound below).
      const sessionsLeft = async () => [await poolSessions(primary), await poolSessions(replica)];
      for (const deadline = performance.now() + 10_000; performance.now() < deadline;) {
        if ((await sessionsLeft()).every((n) => n === 0)) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(await sessionsLeft(), [0, 0]);
      // Every connection the service opened to the primary said goodbye (pool, writer, job locks).
      assert.ok(relay.ended.length >= 3, `connections seen: ${relay.ended.length}`);
      assert.deepEqual(relay.ended.filter((c) => !c.goodbye), [], `${relay.ended.filter((c) => !c.goodbye).length} of ${relay.ended.length} connections were dropped without a Terminate`);
    } finally {
      await relay.close();
    }
  });
});
