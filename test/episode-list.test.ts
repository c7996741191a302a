// GET /v1/episodes?entity=&limit=&offset= (issue 26, the console's episodes view): the namespace's
// episodes newest started first, each with its participants in order, outcome, times and the
// messages still stored; `entity` keeps those it took part in; a bad parameter is 400 naming it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, get, post, startTestService, type TestService } from './support/service.js';
import { MemoryClient } from '../src/client/index.js';

let t: TestService;
const ids: Record<string, string> = {};
before(async () => {
  t = await startTestService();
  ids.old = (await post(t.base, '/v1/episodes/import', {
    participants: ['ep-ana', 'ep-bot'], started_at: '2023-05-08T12:00:00+02:00', outcome: 'success',
    messages: [{ role: 'user', content: 'hello from 2023' }, { role: 'assistant', content: 'hi ana' }],
  })).body.episode_id;
  ids.mid = (await post(t.base, '/v1/episodes/start', { participants: ['ep-cy', 'ep-ana'], started_at: '2024-01-01T00:00:00Z' })).body.episode_id;
  await post(t.base, `/v1/episodes/${ids.mid}/message`, { role: 'user', content: 'cy speaking' });
  ids.open = (await post(t.base, '/v1/episodes/start', { participants: ['ep-cy'] })).body.episode_id;
  for (const id of Object.values(ids)) assert.match(id, /^[0-9a-f-]{36}$/);
});
after(() => t.close());

test('lists episodes newest started first, with participants in order, outcome, times and message counts', async () => {
  const r = await get(t.base, '/v1/episodes');
  assert.equal(r.status, 200);
  assert.equal(r.body.total, 3);
  assert.deepEqual(r.body.episodes.map((e: { episode_id: string }) => e.episode_id), [ids.open, ids.mid, ids.old]);
  const [open, mid, old] = r.body.episodes;
  assert.deepEqual(old, {
    episode_id: ids.old, participants: ['ep-ana', 'ep-bot'], started_at: '2023-05-08T10:00:00.000Z',
    ended_at: old.ended_at, outcome: 'success', message_count: 2,
  });
  assert.ok(Date.parse(old.ended_at) > Date.parse('2025-01-01'), 'ended when it was imported');
  assert.deepEqual([mid.participants, mid.ended_at, mid.outcome, mid.message_count], [['ep-cy', 'ep-ana'], null, null, 1]);
  assert.deepEqual([open.participants, open.message_count], [['ep-cy'], 0]);
});

test('entity keeps the episodes it took part in; an unknown one has none', async () => {
  const ana = await get(t.base, '/v1/episodes?entity=ep-ana');
  assert.deepEqual([ana.body.episodes.map((e: { episode_id: string }) => e.episode_id), ana.body.total], [[ids.mid, ids.old], 2]);
  assert.deepEqual((await get(t.base, '/v1/episodes?entity=nobody')).body, { episodes: [], total: 0 });
  const client = new MemoryClient({ baseUrl: t.base });
  assert.deepEqual((await client.listEpisodes({ entity: 'ep-cy', limit: 1, offset: 1 })).episodes.map((e) => e.episode_id), [ids.mid]);
});

test('limit and offset page through the list without gaps or repeats', async () => {
  const pages = [];
  for (let offset = 0; offset < 4; offset += 2) pages.push(...(await get(t.base, `/v1/episodes?limit=2&offset=${offset}`)).body.episodes);
  assert.deepEqual(pages, (await get(t.base, '/v1/episodes')).body.episodes);
});

test('a bad query parameter is 400 naming it', async () => {
  for (const [query, field] of [['limit=0', 'limit'], ['limit=501', 'limit'], ['offset=-1', 'offset'], ['entity=', 'entity'], [`entity=${'x'.repeat(513)}`, 'entity']]) {
    const r = await get(t.base, `/v1/episodes?${query}`);
    assert.equal(r.status, 400, query);
    assert.match(r.body.error, new RegExp(field), query);
  }
  assert.equal((await get(t.base, '/v1/episodes?participant=ep-ana')).body.code, 'UNKNOWN_FIELD');
});

test("forgetting a participant takes its turns out of the count; an episode nobody is left in is not listed", async () => {
  assert.equal((await call(t.base, 'DELETE', '/v1/entities/ep-ana')).status, 200);
  const r = await get(t.base, '/v1/episodes');
  const mid = r.body.episodes.find((e: { episode_id: string }) => e.episode_id === ids.mid);
  assert.deepEqual([mid.participants, mid.message_count], [['ep-cy'], 0]);
  const old = r.body.episodes.find((e: { episode_id: string }) => e.episode_id === ids.old);
  assert.deepEqual([old.participants, old.message_count], [['ep-bot'], 0]);
  assert.equal((await call(t.base, 'DELETE', '/v1/entities/ep-bot')).status, 200);
  const after = await get(t.base, '/v1/episodes');
  assert.deepEqual([after.body.episodes.map((e: { episode_id: string }) => e.episode_id), after.body.total], [[ids.open, ids.mid], 2]);
});
