// POST /v1/consolidate on a service over PostgreSQL promotes, decays and archives as it does over
// SQLite: one scenario through a service on each backend, the same answers and the same rows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DAY_MS } from '../src/shared/fsrs.js';
import { connectReader, type Sql } from '../src/workers/postgres/client.js';
import { withDb } from './support/db.js';
import { postgresUnavailable, startPrimary, type PgCluster } from './support/postgres.js';
import { get, post, startTestService, type TestService } from './support/service.js';

/** Direct row access behind a running service, for back-dating and checks the API does not expose. */
interface Rows {
  backdate(content: string, days: number): Promise<number>;
  column(content: string, name: string): Promise<unknown>;
}

const sqliteRows = (t: TestService): Rows => ({
  backdate: async (content, days) => withDb(t, (db) => db.prepare('UPDATE memories SET last_access_at = last_access_at - ?, created_at = created_at - ? WHERE content = ?')
    .run(days * DAY_MS, days * DAY_MS, content).changes, { write: true }),
  column: async (content, name) => withDb(t, (db) => (db.prepare(`SELECT ${name} AS v FROM memories WHERE content = ? ORDER BY rowid LIMIT 1`).get(content) as { v: unknown }).v),
});

const postgresRows = (sql: Sql): Rows => ({
  backdate: async (content, days) => (await sql`UPDATE memories SET last_access_at = last_access_at - ${days * DAY_MS}, created_at = created_at - ${days * DAY_MS}
    WHERE content = ${content}`).count,
  column: async (content, name) => (await sql.unsafe(`SELECT ${name} AS v FROM memories WHERE content = $1 ORDER BY rowid LIMIT 1`, [content]))[0]?.v,
});

/** The scenario: each step's consolidate answer, and what the rows and the API show after it. */
async function scenario(t: TestService, rows: Rows) {
  const consolidate = async () => {
    const reply = await post(t.base, '/v1/consolidate');
    assert.equal(reply.status, 200);
    return reply.body;
  };
  const say = async (text: string) => {
    const id = (await post(t.base, '/v1/episodes/start', { participants: ['co-ann', 'co-bot'] })).body.episode_id;
    await post(t.base, `/v1/episodes/${id}/message`, { role: 'user', content: text });
    await post(t.base, `/v1/episodes/${id}/message`, { role: 'assistant', content: 'Sounds fun!' });
  };
  for (const text of ['I go climbing every Sunday.', 'i go climbing every sunday', 'I go climbing every Sunday!', 'I bought new climbing shoes']) await say(text);
  await post(t.base, '/v1/remember', { entity: 'co-dee', fact: 'Dee collects stamps from Iceland' });
  await post(t.base, '/v1/remember', { entity: 'co-eve', fact: 'Eve once owned a yellow submarine' });
  await t.service.backfill.idle();

  const promoted = await consolidate();
  const again = await consolidate();
  const semantic = (await post(t.base, '/v1/inspect', { entity: 'co-ann' })).body.semantic.map((m: any) => [m.content, m.confidence]);
  const promotedInto = await rows.column('I go climbing every Sunday.', 'promoted_into');

  assert.equal(await rows.backdate('Dee collects stamps from Iceland', 10), 1);
  assert.equal(await rows.backdate('Eve once owned a yellow submarine', 3650), 1);
  const statsBefore = (await get(t.base, '/v1/stats')).body;
  const decayed = await consolidate();
  const statsAfter = (await get(t.base, '/v1/stats')).body;
  return {
    answers: [promoted, again, decayed, await consolidate()],
    semantic,
    promoted: typeof promotedInto === 'number' && promotedInto > 0,
    lapsedDifficulty: await rows.column('Dee collects stamps from Iceland', 'difficulty'),
    archived: await rows.column('Eve once owned a yellow submarine', 'archived'),
    semanticDropped: statsBefore.semantic_memories - statsAfter.semantic_memories,
  };
}

const expected = {
  answers: [{ promoted: 1, decayed: 0, archived: 0 }, { promoted: 0, decayed: 0, archived: 0 },
    { promoted: 0, decayed: 1, archived: 1 }, { promoted: 0, decayed: 0, archived: 0 }],
  semantic: [['I go climbing every Sunday.', 0.7]],
  promoted: true,
  archived: 1,
  semanticDropped: 1,
};

let sqliteResult: Awaited<ReturnType<typeof scenario>>;

test('over SQLite: promotion once, one decay step, one archive', async () => {
  const t = await startTestService({ SERVICE_EMBEDDER: 'hash' });
  try {
    sqliteResult = await scenario(t, sqliteRows(t));
    const { lapsedDifficulty, ...rest } = sqliteResult;
    assert.deepEqual(rest, expected);
    assert.ok((lapsedDifficulty as number) > 5, 'the lapse raised the difficulty');
  } finally {
    await t.close();
  }
});

const unavailable = postgresUnavailable();
let primary: PgCluster | undefined;
let sql: Sql | undefined;
let t: TestService | undefined;

before(async () => {
  if (unavailable) return;
  primary = await startPrimary();
  await primary.sql('CREATE DATABASE consolidation');
});
after(async () => {
  await t?.close();
  await sql?.end();
  await primary?.stop();
});

test('over PostgreSQL: the same answers and the same rows', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, async () => {
  const url = primary!.url.replace(/\/postgres$/, '/consolidation');
  t = await startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_DATABASE_URL: url });
  sql = connectReader(url, { max: 1 });
  const result = await scenario(t, postgresRows(sql));
  const { lapsedDifficulty, ...rest } = result;
  assert.deepEqual(rest, expected);
  assert.equal(lapsedDifficulty, sqliteResult.lapsedDifficulty);
});
