// Forget means forget (issue 25, part 7): DELETE /v1/entities/{name} removes the entity record
// once its memories are gone — it leaves GET /v1/entities, inspect answers 404 and stats.entities
// drops by one — and the snapshot keeps the record (kind, created_at, episode participations), so a
// restore brings everything back as it was. Backend-agnostic (HTTP only): scripts/test-postgres.mjs
// runs it on PostgreSQL too. The offline CLI restore (SQLite file) is checked at the end.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { del, get, post, startTestService, tempDir, type TestService } from './support/service.js';
import { onPostgres } from './support/test-backend.js';
import { runCli } from './support/cli.js';
import { join } from 'node:path';

let t: TestService;
before(async () => {
  t = await startTestService({ SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1', SERVICE_EXTRACTOR_TIMEOUT_MS: '2000' });
});
after(() => t.close());

const listed = async (base: string, name: string) =>
  (await get(base, `/v1/entities?q=${encodeURIComponent(name)}&limit=500`)).body.entities.find((e: { name: string }) => e.name === name);

/** What a deleted-then-restored entity must show again exactly. */
async function seen(base: string, name: string) {
  const inspected = await post(base, '/v1/inspect', { entity: name, limit: 1000 });
  return { stats: (await get(base, '/v1/stats')).body, entity: await listed(base, name), inspect: [inspected.status, inspected.body] };
}

test('delete → the entity is gone (404 on inspect, absent from entities, stats decremented) → restore → all back', async () => {
  assert.equal((await post(t.base, '/v1/entities', { name: 'fm-agent', kind: 'agent' })).status, 201);
  await post(t.base, '/v1/remember', { entity: 'fm-agent', fact: 'Fm-agent answers in French' });
  await post(t.base, '/v1/remember', { entity: 'fm-agent', fact: 'Fm-agent runs on Tuesdays' });
  await post(t.base, '/v1/remember', { entity: 'fm-bystander', fact: 'Fm-bystander works with fm-agent' });
  const episode = (await post(t.base, '/v1/episodes/start', { participants: ['fm-agent', 'fm-user'] })).body.episode_id;
  assert.equal((await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'Hello there' })).status, 200);
  const before = await seen(t.base, 'fm-agent');
  assert.equal(before.entity.kind, 'agent');
  assert.equal(before.inspect[0], 200);

  const deleted = await del(t.base, '/v1/entities/fm-agent');
  assert.equal(deleted.status, 200);
  assert.equal(deleted.body.forgotten_count, 3);
  const inspect = await post(t.base, '/v1/inspect', { entity: 'fm-agent' });
  assert.deepEqual([inspect.status, inspect.body.code], [404, 'NOT_FOUND']);
  assert.equal(await listed(t.base, 'fm-agent'), undefined, 'the name left GET /v1/entities');
  const stats = (await get(t.base, '/v1/stats')).body;
  assert.equal(stats.entities, before.stats.entities - 1);
  assert.deepEqual((await post(t.base, '/v1/recall', { query: 'French Tuesdays', entity: 'fm-agent' })).body.memories, []);
  // Only the forgotten entity goes: the bystander and the other participant stay, with their memories.
  assert.equal((await post(t.base, '/v1/inspect', { entity: 'fm-bystander' })).body.semantic.length, 1);
  assert.ok(await listed(t.base, 'fm-user'));
  assert.equal((await del(t.base, '/v1/entities/fm-agent')).status, 404, 'a second DELETE finds no entity');

  const restored = await post(t.base, `/v1/snapshots/${deleted.body.snapshot.snapshot_id}/restore`);
  assert.deepEqual([restored.status, restored.body.restored_count], [200, 3]);
  assert.deepEqual(await seen(t.base, 'fm-agent'), before, 'the entity (kind, created_at), its memories and the counts are back');
  // Its episode participation is back too: a new turn of that episode is the entity's again.
  assert.equal((await post(t.base, `/v1/episodes/${episode}/message`, { role: 'assistant', content: 'Welcome back' })).status, 200);
  const turns = (await post(t.base, '/v1/inspect', { entity: 'fm-agent' })).body.episodic.map((m: { content: string }) => m.content).sort();
  assert.deepEqual(turns, ['Hello there', 'Welcome back']);
});

test('an entity without memories is removed too, with no snapshot (nothing but its name to restore)', async () => {
  await post(t.base, '/v1/entities', { name: 'fm-empty', kind: 'tool' });
  const entities = (await get(t.base, '/v1/stats')).body.entities;
  const r = await del(t.base, '/v1/entities/fm-empty');
  assert.deepEqual([r.status, r.body], [200, { forgotten_count: 0 }]);
  assert.equal(await listed(t.base, 'fm-empty'), undefined);
  assert.equal((await get(t.base, '/v1/stats')).body.entities, entities - 1);
  // Created again on first use, a new entity (the default kind).
  await post(t.base, '/v1/remember', { entity: 'fm-empty', fact: 'Fm-empty is back' });
  assert.equal((await listed(t.base, 'fm-empty')).kind, 'user');
});

test('a participant deleted: the other participant keeps its entity; both restore', async () => {
  const episode = (await post(t.base, '/v1/episodes/start', { participants: ['fm-left', 'fm-right'] })).body.episode_id;
  await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'Shared words' });
  const deleted = await del(t.base, '/v1/entities/fm-left');
  assert.equal(deleted.body.forgotten_count, 1);
  assert.equal(await listed(t.base, 'fm-left'), undefined);
  assert.deepEqual((await listed(t.base, 'fm-right')).memory_count, 0, 'the shared turn went with the deleted participant');
  await post(t.base, `/v1/snapshots/${deleted.body.snapshot.snapshot_id}/restore`);
  assert.equal((await listed(t.base, 'fm-left')).memory_count, 1);
  assert.equal((await listed(t.base, 'fm-right')).memory_count, 1);
});

test('the offline CLI restore brings the entity back too (SQLite file)', { skip: onPostgres && 'PostgreSQL restores through the service (the online restore above)' }, async () => {
  const dir = tempDir('memrt-forget-cli-');
  const db = join(dir, 'memory.db');
  const s = await startTestService({ SERVICE_PATH: db });
  let snapshotId = '';
  let before: unknown;
  try {
    await post(s.base, '/v1/entities', { name: 'fm-cli', kind: 'team' });
    await post(s.base, '/v1/remember', { entity: 'fm-cli', fact: 'Fm-cli ships on Fridays' });
    before = await seen(s.base, 'fm-cli');
    const deleted = await del(s.base, '/v1/entities/fm-cli');
    snapshotId = deleted.body.snapshot.snapshot_id;
    assert.equal(await listed(s.base, 'fm-cli'), undefined);
  } finally {
    await s.close(); // the database is in our own folder: it stays
  }
  const r = await runCli(['restore', snapshotId, '--db', db]);
  assert.equal(r.code, 0, r.stderr);
  const again = await startTestService({ SERVICE_PATH: db });
  try {
    assert.deepEqual(await seen(again.base, 'fm-cli'), before);
  } finally {
    await again.close();
  }
});
