// `migrate` copies a SQLite service's namespace into a real PostgreSQL 15 cluster: the same ids,
// columns (FSRS state, timestamps), episodes, links and vectors; a service started on PostgreSQL
// then recalls and inspects the same memories. Refused while the SQLite service runs, refused
// into a namespace that already holds memories, and idempotent with --merge.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import postgres from 'postgres';
import { openDatabase } from '../src/shared/db.js';
import { get, post, startTestService, type TestService } from './support/service.js';
import { runCli } from './support/cli.js';
import { postgresUnavailable, startPrimary, type PgCluster } from './support/postgres.js';

const unavailable = postgresUnavailable();
const EMBEDDER = { SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '16' };
const MEMORY_COLUMNS = ['id', 'memory_type', 'content', 'content_key', 'confidence', 'stability', 'difficulty', 'access_count',
  'last_access_at', 'created_at', 'archived', 'extraction_tier', 'entity_id', 'episode_id', 'seq', 'role', 'context', 'embedded'];

describe('memory-runtime migrate: SQLite into PostgreSQL', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let primary: PgCluster;
  let sqliteService: TestService;
  let path: string;
  let url: string;
  let pg: postgres.Sql;
  const queries = ['where does Ada live', 'which instrument does Bo play', 'ferry to the island'];
  const sqliteTop = new Map<string, string>();
  let sqliteInspect: unknown;
  let sqliteStats: unknown;
  let sqliteStopped = false;

  before(async () => {
    primary = await startPrimary();
    await primary.sql('CREATE DATABASE migrated');
    url = primary.url.replace(/\/postgres$/, '/migrated');
    pg = postgres(url, { max: 1, onnotice: () => {}, types: { int8: { to: 20, from: [20], serialize: String, parse: Number } } as never });
    sqliteService = await startTestService(EMBEDDER);
    path = join(sqliteService.dir, 'memory.db');
    const base = sqliteService.base;
    await post(base, '/v1/remember', { entity: 'ada', fact: 'Ada lives in Zürich near the lake', confidence: 0.95 });
    await post(base, '/v1/remember', { entity: 'ada', fact: 'Ada prefers green tea' });
    await post(base, '/v1/remember', { entity: 'bo', fact: 'Bo plays the cello in an orchestra', confidence: 0.6 });
    const episode = (await post(base, '/v1/episodes/start', { participants: ['ada', 'bo'] })).body.episode_id;
    await post(base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'We took the ferry to the island' });
    await post(base, `/v1/episodes/${episode}/message`, { role: 'assistant', content: 'The island ferry leaves at nine' });
    await sqliteService.service.backfill.idle();
    for (const query of queries) sqliteTop.set(query, (await post(base, '/v1/recall', { query, limit: 1 })).body.memories[0].id);
    // Reinforcement from those recalls is written before the copy: wait for the writer to settle.
    await new Promise((resolve) => setTimeout(resolve, 300));
    sqliteInspect = (await post(base, '/v1/inspect', { entity: 'ada' })).body;
    sqliteStats = (await get(base, '/v1/stats')).body;
  });

  after(async () => {
    await pg?.end();
    if (!sqliteStopped) await sqliteService?.close();
    await primary?.stop();
  });

  test('refused while the service holds the SQLite file', async () => {
    const run = await runCli(['migrate', '--db', path, '--to', url, '--quiet']);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /in use/);
    const [{ n }] = await pg`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'memories'`;
    assert.equal(n, 0);
  });

  test('copies every row with its ids, columns, links and vectors', async () => {
    await sqliteService.service.close();
    sqliteStopped = true;
    const run = await runCli(['migrate', '--db', path, '--to', url, '--quiet']);
    assert.equal(run.code, 0, run.stderr);
    const db = openDatabase(path, { readonly: true });
    try {
      const list = MEMORY_COLUMNS.join(', ');
      const fromSqlite = db.prepare(`SELECT ${list} FROM memories ORDER BY id`).all();
      const fromPg = await pg.unsafe(`SELECT ${list} FROM memories ORDER BY id`);
      assert.equal(fromPg.length, fromSqlite.length);
      // The recalls above reinforced what they returned: FSRS state that is not the default.
      assert.ok(fromSqlite.some((row) => (row as { access_count: number }).access_count > 0));
      assert.deepEqual(fromPg.map((row) => ({ ...row })), fromSqlite.map((row) => ({ ...(row as object) })));
      assert.deepEqual(await pg`SELECT id, name, kind, created_at FROM entities ORDER BY id`.then((r) => r.map((x) => ({ ...x }))),
        db.prepare('SELECT id, name, kind, created_at FROM entities ORDER BY id').all().map((x) => ({ ...(x as object) })));
      assert.deepEqual(await pg`SELECT id, started_at, last_activity_at, ended_at, outcome, message_count FROM episodes`.then((r) => r.map((x) => ({ ...x }))),
        db.prepare('SELECT id, started_at, last_activity_at, ended_at, outcome, message_count FROM episodes').all().map((x) => ({ ...(x as object) })));
      const links = 'SELECT m.id, l.entity_id, l.relation FROM memory_entities l JOIN memories m ON m.rowid = l.memory_rowid ORDER BY 1, 2, 3';
      assert.deepEqual((await pg.unsafe(links)).map((x) => ({ ...x })), db.prepare(links).all().map((x) => ({ ...(x as object) })));
      const participants = 'SELECT episode_id, entity_id, position FROM episode_participants ORDER BY 1, 3';
      assert.deepEqual((await pg.unsafe(participants)).map((x) => ({ ...x })), db.prepare(participants).all().map((x) => ({ ...(x as object) })));
      const vectors = await pg<{ id: string; embedding: Buffer }[]>`SELECT m.id, v.embedding FROM memory_vectors v JOIN memories m ON m.rowid = v.rowid ORDER BY m.id`;
      const sqliteVectors = db.prepare('SELECT m.id, v.embedding FROM memory_vectors v JOIN memories m ON m.rowid = v.rowid ORDER BY m.id').all() as { id: string; embedding: Buffer }[];
      assert.equal(vectors.length, fromSqlite.length);
      assert.deepEqual(vectors.map((v) => [v.id, v.embedding.toString('hex')]), sqliteVectors.map((v) => [v.id, Buffer.from(v.embedding).toString('hex')]));
    } finally {
      db.close();
    }
  });

  test('a service on PostgreSQL recalls and inspects the same memories', async () => {
    const t = await startTestService({ ...EMBEDDER, SERVICE_DATABASE_URL: url });
    try {
      assert.deepEqual((await get(t.base, '/v1/stats')).body, sqliteStats);
      const inspect = (await post(t.base, '/v1/inspect', { entity: 'ada' })).body;
      const ids = (body: any) => ['episodic', 'semantic', 'procedural'].map((type) => body[type].map((m: { id: string }) => m.id).sort());
      assert.deepEqual(ids(inspect), ids(sqliteInspect));
      for (const query of queries) {
        const [top] = (await post(t.base, '/v1/recall', { query, limit: 1 })).body.memories;
        assert.equal(top?.id, sqliteTop.get(query), query);
      }
    } finally {
      await t.close();
    }
  });

  test('running it again is refused; with --merge it changes nothing', async () => {
    const count = async () => (await pg`SELECT (SELECT count(*) FROM memories)::int AS m, (SELECT count(*) FROM entities)::int AS e,
      (SELECT count(*) FROM episodes)::int AS ep, (SELECT count(*) FROM memory_vectors)::int AS v`)[0];
    const before = { ...(await count()) };
    const refused = await runCli(['migrate', '--db', path, '--to', url, '--quiet']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /--merge/);
    const merged = await runCli(['migrate', '--db', path, '--to', url, '--merge', '--quiet']);
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(merged.stdout, / 0 memories/);
    assert.deepEqual({ ...(await count()) }, before);
  });

  test('with --merge, promoted_into names the same memories by their rowids here, also ones already present', async () => {
    // The file's episodic turns were promoted into one of Ada's facts (set here: the rowids are the point).
    const db = openDatabase(path, { readonly: false });
    try {
      db.prepare(`UPDATE memories SET promoted_into = (SELECT rowid FROM memories WHERE content = 'Ada prefers green tea')
        WHERE memory_type = 'episodic'`).run();
    } finally {
      db.close();
    }
    const promotions = 'SELECT m.id, p.id AS into_id FROM memories m JOIN memories p ON p.rowid = m.promoted_into ORDER BY m.id';
    const source = openDatabase(path, { readonly: true });
    const expected = source.prepare(promotions).all().map((row) => ({ ...(row as object) }));
    source.close();
    assert.equal(expected.length, 2, 'the fixture: two promoted turns');
    // A target that already holds memories: every copied row gets another rowid than in the file.
    await primary.sql('CREATE DATABASE merged');
    const mergedUrl = primary.url.replace(/\/postgres$/, '/merged');
    const t = await startTestService({ ...EMBEDDER, SERVICE_DATABASE_URL: mergedUrl });
    try {
      for (const fact of ['Zed keeps bees', 'Zed sails on weekends', 'Zed bakes bread']) await post(t.base, '/v1/remember', { entity: 'zed', fact });
    } finally {
      await t.close();
    }
    const merged = postgres(mergedUrl, { max: 1, onnotice: () => {} });
    try {
      const copy = async () => {
        const run = await runCli(['migrate', '--db', path, '--to', mergedUrl, '--merge', '--quiet']);
        assert.equal(run.code, 0, run.stderr);
        return (await merged.unsafe(promotions)).map((row) => ({ ...row }));
      };
      assert.deepEqual(await copy(), expected, 'copied together');
      // The promoted turns go; copied again, they find the fact they were promoted into already here.
      await merged`DELETE FROM memories WHERE memory_type = 'episodic'`;
      assert.deepEqual(await copy(), expected, 'the fact was already present');
    } finally {
      await merged.end();
    }
  });

  test('without a PostgreSQL URL it is a usage error', async () => {
    const run = await runCli(['migrate', '--db', path, '--quiet'], { env: { SERVICE_DATABASE_URL: '' } });
    assert.equal(run.code, 2);
  });
});
