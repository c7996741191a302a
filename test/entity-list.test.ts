// GET /v1/entities?q=&limit=&offset= (issue 15, the console's entity list): by name, a page at
// a time, with the total; a bad parameter is 400 naming it and changes nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { get, post, startTestService, type TestService } from './support/service.js';
import { MemoryClient } from '../src/client/index.js';

let t: TestService;
before(async () => {
  t = await startTestService();
  for (const [entity, facts] of [['alice', 3], ['Alicia Keys', 1], ['bob', 2], ['ÉMILE', 1], ['zed', 0]] as const) {
    if (facts === 0) await post(t.base, '/v1/entities', { name: entity, kind: 'tool' });
    for (let i = 0; i < facts; i++) await post(t.base, '/v1/remember', { entity, fact: `${entity} fact ${i}` });
  }
  const episode = (await post(t.base, '/v1/episodes/start', { participants: ['bob', 'zed'] })).body.episode_id;
  await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'hello zed' });
});
after(() => t.close());

const names = (body: { entities: { name: string }[] }) => body.entities.map((e) => e.name);

test('lists every entity by name with kind, creation time and active memory count', async () => {
  const r = await get(t.base, '/v1/entities');
  assert.equal(r.status, 200);
  assert.equal(r.body.total, 5);
  assert.deepEqual(names(r.body), ['Alicia Keys', 'alice', 'bob', 'zed', 'ÉMILE']);
  const byName = Object.fromEntries(r.body.entities.map((e: { name: string }) => [e.name, e]));
  assert.deepEqual(Object.keys(byName.zed).sort(), ['created_at', 'kind', 'memory_count', 'name']);
  assert.equal(byName.zed.kind, 'tool');
  assert.ok(!Number.isNaN(Date.parse(byName.zed.created_at)));
  // Owner or participant: bob owns 2 facts and took part in one turn; zed only took part.
  assert.deepEqual([byName.alice.memory_count, byName.bob.memory_count, byName.zed.memory_count], [3, 3, 1]);
});

test('q is a case-insensitive substring of the name (beyond ASCII); total counts the matches', async () => {
  const ali = await get(t.base, '/v1/entities?q=ALI');
  assert.deepEqual([names(ali.body), ali.body.total], [['Alicia Keys', 'alice'], 2]);
  assert.deepEqual(names((await get(t.base, `/v1/entities?q=${encodeURIComponent('émi')}`)).body), ['ÉMILE']);
  assert.deepEqual(names((await get(t.base, '/v1/entities?q=a%20k')).body), ['Alicia Keys']);
  const none = await get(t.base, '/v1/entities?q=%25');
  assert.deepEqual([none.body.entities, none.body.total], [[], 0]);
});

test('limit and offset page through the list without gaps or repeats', async () => {
  const pages = [];
  for (let offset = 0; offset < 6; offset += 2) {
    const r = await get(t.base, `/v1/entities?limit=2&offset=${offset}`);
    assert.equal(r.body.total, 5);
    pages.push(...names(r.body));
  }
  assert.deepEqual(pages, names((await get(t.base, '/v1/entities?limit=500')).body));
  const client = new MemoryClient({ baseUrl: t.base });
  assert.deepEqual(names(await client.listEntities({ q: 'b', limit: 1 })), ['bob']);
});

test('a bad query parameter is 400 naming it', async () => {
  for (const [query, field] of [
    ['limit=0', 'limit'], ['limit=501', 'limit'], ['limit=abc', 'limit'], ['limit=1.5', 'limit'], ['limit=', 'limit'],
    ['offset=-1', 'offset'], ['offset=x', 'offset'], ['limit=1&limit=2', 'limit'], [`q=${'x'.repeat(513)}`, 'q'],
  ]) {
    const r = await get(t.base, `/v1/entities?${query}`);
    assert.equal(r.status, 400, query);
    assert.equal(r.body.code, 'INVALID_VALUE', query);
    assert.match(r.body.error, new RegExp(field), query);
  }
  // An unknown parameter is refused, as a body's unknown field is: `?qq=` must not list everyone.
  const unknown = await get(t.base, '/v1/entities?qq=maria');
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.code, 'UNKNOWN_FIELD');
  assert.match(unknown.body.error, /unknown query parameter 'qq' \(did you mean 'q'\?\)/);
});

test("q folds every name as JavaScript's toLowerCase does, whether the name is ASCII or not", async () => {
  // U+212A KELVIN SIGN lower-cases to an ASCII 'k'; SQLite's lower() leaves it alone.
  for (const name of ['\u212Aelvin Probe', 'ΣΟΦΙΑ', 'MiXeD-Case_99']) await post(t.base, '/v1/entities', { name });
  assert.deepEqual(names((await get(t.base, '/v1/entities?q=kelvin')).body), ['\u212Aelvin Probe']);
  assert.deepEqual(names((await get(t.base, `/v1/entities?q=${encodeURIComponent('σοφ')}`)).body), ['ΣΟΦΙΑ']);
  assert.deepEqual(names((await get(t.base, '/v1/entities?q=mixed-case_9')).body), ['MiXeD-Case_99']);
});
