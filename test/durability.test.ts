// An acknowledged write survives the process being killed with SIGKILL immediately after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { get, post, tempDir } from './support/service.js';
import { exited, spawnService } from './support/process.js';

test('acknowledged writes are not lost on SIGKILL', async () => {
  const dir = tempDir();
  const env = { SERVICE_PATH: join(dir, 'memory.db'), LOG_LEVEL: 'info' };
  const first = await spawnService(env);
  const acked = await Promise.all(
    Array.from({ length: 300 }, (_, i) => post(first.base, '/v1/remember', { entity: `killed-${i % 3}`, fact: `durable fact ${i}` })),
  );
  const episode = await post(first.base, '/v1/episodes/start', { participants: ['killed-0'] });
  const message = await post(first.base, `/v1/episodes/${episode.body.episode_id}/message`, { role: 'user', content: 'last words' });
  first.child.kill('SIGKILL'); // no chance to flush or checkpoint
  await exited(first.child);
  assert.ok(acked.every((r) => r.status === 201));
  assert.equal(message.status, 200);

  const second = await spawnService(env);
  try {
    const stats = (await get(second.base, '/v1/stats')).body;
    assert.equal(stats.semantic_memories, 300);
    assert.equal(stats.episodic_memories, 1);
    const ids = new Set<string>();
    for (const name of ['killed-0', 'killed-1', 'killed-2']) {
      const inspect = await post(second.base, '/v1/inspect', { entity: name, limit: 1000 });
      for (const m of inspect.body.semantic) ids.add(m.id);
    }
    for (const r of acked) assert.ok(ids.has(r.body.id), `acknowledged ${r.body.id} survived`);
    // the episode is still active after the restart
    const more = await post(second.base, `/v1/episodes/${episode.body.episode_id}/message`, { role: 'user', content: 'back again' });
    assert.equal(more.status, 200);
    // Graceful shutdown: SIGTERM drains and exits 0, and nothing written is lost.
    const last = await post(second.base, '/v1/remember', { entity: 'killed-0', fact: 'written just before SIGTERM' });
    assert.equal(last.status, 201);
    second.child.kill('SIGTERM');
    await exited(second.child);
    assert.equal(second.child.exitCode, 0);
    assert.match(second.output(), /"msg":"stopped"/);
    const third = await spawnService(env);
    try {
      assert.equal((await get(third.base, '/v1/stats')).body.semantic_memories, 301);
    } finally {
      third.child.kill('SIGKILL');
      await exited(third.child);
    }
  } finally {
    second.child.kill('SIGKILL');
    await exited(second.child);
  }
});
