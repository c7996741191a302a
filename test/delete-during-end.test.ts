// A delete that commits while `end` is still waiting on the extractor wins: the extraction's
// output, computed from turns that are now deleted, is not stored.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { del, post, startTestService, type TestService } from './support/service.js';
import { FakeLlm } from './support/fake-llm.js';

let fake: FakeLlm;
let t: TestService;
before(async () => {
  fake = await FakeLlm.start();
  t = await startTestService({ SERVICE_EXTRACTOR_URL: fake.url, SERVICE_EXTRACTOR_TIMEOUT_MS: '30000' });
});
after(async () => {
  await t.close();
  await fake.close();
});

test('forgotten turns do not come back through an in-flight extraction', async () => {
  const { episode_id } = (await post(t.base, '/v1/episodes/start', { participants: ['dd-alice'] })).body;
  await post(t.base, `/v1/episodes/${episode_id}/message`, { role: 'user', content: 'I live in Berlin' });
  fake.reply = { kind: 'hang' };
  const ending = post(t.base, `/v1/episodes/${episode_id}/end`, {});
  // Wait until the extractor holds the request, then forget the entity.
  while (!fake.requests.some((r) => r.path.endsWith('/chat/completions'))) await new Promise((r) => setTimeout(r, 20));
  const forgotten = await del(t.base, '/v1/entities/dd-alice');
  assert.equal(forgotten.body.forgotten_count, 1);
  fake.release({ kind: 'memories', memories: [{ content: 'dd-alice lives in Berlin', memory_type: 'semantic', confidence: 0.9 }] });

  const ended = await ending;
  assert.equal(ended.status, 200);
  assert.equal(ended.body.memories_created, 0);
  // A fact stored from the forgotten turn would have kept (or brought back) the entity: it is gone.
  const inspect = await post(t.base, '/v1/inspect', { entity: 'dd-alice' });
  assert.equal(inspect.status, 404, JSON.stringify(inspect.body));
});

test('without a delete the same flow stores what was extracted', async () => {
  const { episode_id } = (await post(t.base, '/v1/episodes/start', { participants: ['dd-bob'] })).body;
  await post(t.base, `/v1/episodes/${episode_id}/message`, { role: 'user', content: 'I live in Oslo' });
  fake.reply = { kind: 'memories', memories: [{ content: 'dd-bob lives in Oslo', memory_type: 'semantic', confidence: 0.9 }] };
  const ended = await post(t.base, `/v1/episodes/${episode_id}/end`, {});
  assert.equal(ended.body.memories_created, 1);
});
