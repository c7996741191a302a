// Snapshot-first deletion: the snapshot file exists (0600) with every deleted row before the
// delete commits; if it cannot be written, the delete is aborted and nothing is removed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { del, get, post, startTestService, type TestService } from './support/service.js';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(() => t.close());

test('the snapshot file is 0600 and holds every deleted row with all fields', async () => {
  const facts = ['likes rowing', 'owns a canoe', 'lives near the lake'];
  const stored = [];
  for (const fact of facts) stored.push((await post(t.base, '/v1/remember', { entity: 'snap-user', fact, confidence: 0.7 })).body);
  const episode = (await post(t.base, '/v1/episodes/start', { participants: ['snap-user', 'helper-bot'] })).body.episode_id;
  await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'paddling tomorrow' });

  const r = await del(t.base, '/v1/entities/snap-user');
  assert.equal(r.status, 200);
  assert.equal(r.body.forgotten_count, 4);
  assert.deepEqual([r.body.snapshot.episodic_count, r.body.snapshot.semantic_count], [1, 3]);

  const path = join(t.dir, 'snapshots', `${r.body.snapshot.snapshot_id}.json`);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  const snapshot = JSON.parse(readFileSync(path, 'utf8'));
  assert.equal(snapshot.snapshot_id, r.body.snapshot.snapshot_id);
  assert.equal(snapshot.format_version, 1);
  assert.equal(snapshot.namespace, 'default');
  assert.equal(snapshot.entity.name, 'snap-user');
  assert.equal(snapshot.memories.length, 4);
  for (const s of stored) {
    const row = snapshot.memories.find((m: any) => m.id === s.id);
    assert.ok(row, `snapshot holds ${s.id}`);
    assert.equal(row.content, s.content);
    assert.equal(row.confidence, 0.7);
    assert.equal(row.stability, s.stability);
    for (const field of ['created_at', 'last_access_at', 'difficulty', 'access_count', 'extraction_tier', 'archived', 'links']) {
      assert.ok(field in row, field);
    }
  }
  const turn = snapshot.memories.find((m: any) => m.memory_type === 'episodic');
  assert.equal(turn.episode_id, episode);
  assert.equal(turn.content, 'paddling tomorrow');
});

test('when the snapshot cannot be written the delete is aborted with 5xx and nothing is removed', async () => {
  await post(t.base, '/v1/remember', { entity: 'keep-user', fact: 'must survive' });
  await post(t.base, '/v1/remember', { entity: 'keep-user', fact: 'must also survive' });
  const before = (await get(t.base, '/v1/stats')).body;
  // Occupy the snapshot folder's path with a regular file: mkdir and open both fail, even as root.
  const snapshots = join(t.dir, 'snapshots');
  rmSync(snapshots, { recursive: true, force: true });
  writeFileSync(snapshots, 'not a directory');
  try {
    const r = await del(t.base, '/v1/entities/keep-user');
    assert.ok(r.status >= 500 && r.status < 600, `status ${r.status}`);
    assert.equal(typeof r.body.error, 'string');
    assert.equal(r.body.code, 'SNAPSHOT_FAILED');
    assert.ok(!r.body.error.includes(t.dir), 'no server path in the body');
    assert.deepEqual((await get(t.base, '/v1/stats')).body, before);
    const inspect = await post(t.base, '/v1/inspect', { entity: 'keep-user' });
    assert.equal(inspect.body.semantic.length, 2);
    const recall = await post(t.base, '/v1/recall', { query: 'survive', entity: 'keep-user' });
    assert.equal(recall.body.memories.length, 2);
  } finally {
    rmSync(snapshots, { force: true });
  }
  // once the path is free again, the same delete succeeds
  const retry = await del(t.base, '/v1/entities/keep-user');
  assert.equal(retry.status, 200);
  assert.equal(retry.body.forgotten_count, 2);
});
