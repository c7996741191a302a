// Episode expiry with a short TTL: derived from stored timestamps, so it holds across a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { post, startTestService, tempDir, type TestService } from './support/service.js';

const TTL_SECONDS = 1;
/** Comfortably past the TTL; only ever waited for, never asserted on. */
const PAST_TTL_MS = TTL_SECONDS * 1000 + 500;

async function startWithMessage(t: TestService, name: string, content: string): Promise<string> {
  const id = (await post(t.base, '/v1/episodes/start', { participants: [name] })).body.episode_id;
  assert.equal((await post(t.base, `/v1/episodes/${id}/message`, { role: 'user', content })).status, 200);
  return id;
}

test('an expired episode refuses messages (404), also after a restart, and can still be ended', async () => {
  const dir = tempDir();
  const env = { SERVICE_PATH: join(dir, 'memory.db'), SERVICE_EPISODE_TTL_SECONDS: String(TTL_SECONDS), SERVICE_EMBEDDER: 'hash' };
  let t = await startTestService(env);
  try {
    const early = await startWithMessage(t, 'ttl-ada', 'I live in Ghent.');
    await sleep(PAST_TTL_MS);
    const late = await post(t.base, `/v1/episodes/${early}/message`, { role: 'user', content: 'still there?' });
    assert.equal(late.status, 404);
    assert.equal(typeof late.body.error, 'string');
    const end = await post(t.base, `/v1/episodes/${early}/end`, { outcome: 'partial' });
    assert.deepEqual([end.status, end.body], [200, { memories_created: 1, extraction_tier: 1 }], 'end extracts from an expired episode');
    assert.equal((await post(t.base, `/v1/episodes/${early}/end`, {})).status, 404, 'and ends it only once');

    // This one expires while the service is down: no timer survives a restart, only timestamps.
    const beforeRestart = await startWithMessage(t, 'ttl-bo', 'I have a red bike.');
    await t.close();
    await sleep(PAST_TTL_MS);
    t = await startTestService(env);
    const afterRestart = await post(t.base, `/v1/episodes/${beforeRestart}/message`, { role: 'user', content: 'hello again' });
    assert.equal(afterRestart.status, 404);
    const ended = await post(t.base, `/v1/episodes/${beforeRestart}/end`, {});
    assert.deepEqual([ended.status, ended.body], [200, { memories_created: 1, extraction_tier: 1 }]);
    const facts = (await post(t.base, '/v1/inspect', { entity: 'ttl-bo' })).body.semantic.map((m: any) => m.content);
    assert.deepEqual(facts, ['ttl-bo has a red bike']);
  } finally {
    await t.close();
  }
});
