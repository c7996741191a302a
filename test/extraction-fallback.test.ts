// `end` never fails because of the extractor: down, slow, refusing or talking nonsense, the
// tier-1 rules still produce memories from clear first-person statements.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { get, post, startTestService, type TestService } from './support/service.js';
import { FakeLlm, unreachableUrl, type FakeReply } from './support/fake-llm.js';
import { extractedRows } from './support/db.js';

let down: TestService;
let flaky: TestService;
let llm: FakeLlm;
before(async () => {
  llm = await FakeLlm.start();
  [down, flaky] = await Promise.all([
    startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_EXTRACTOR_URL: await unreachableUrl() }),
    startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_EXTRACTOR_URL: llm.url, SERVICE_EXTRACTOR_TIMEOUT_MS: '2000' }),
  ]);
});
after(async () => {
  await Promise.all([down.close(), flaky.close()]);
  await llm.close();
});

const MESSAGES = [
  ['user', "Hi! I'm allergic to peanuts. I live in Ghent."],
  ['assistant', 'Noted. Anything else?'],
  ['user', 'To reset my thermostat, hold the power button for ten seconds.'],
];

/** Runs one episode to its end and checks the rule-based memories it stored. */
async function endsWithRules(t: TestService, name: string): Promise<void> {
  const id = (await post(t.base, '/v1/episodes/start', { participants: [name] })).body.episode_id;
  for (const [role, content] of MESSAGES) await post(t.base, `/v1/episodes/${id}/message`, { role, content });
  const before = (await get(t.base, '/v1/stats')).body;
  const end = await post(t.base, `/v1/episodes/${id}/end`, { outcome: 'success' });
  assert.equal(end.status, 200);
  assert.equal(end.body.memories_created, 3);
  assert.equal(end.body.extraction_tier, 1);
  const after = (await get(t.base, '/v1/stats')).body;
  assert.equal(after.semantic_memories - before.semantic_memories, 2);
  assert.equal(after.procedural_memories - before.procedural_memories, 1);
  const rows = extractedRows(t, id);
  assert.deepEqual(rows.map((r) => r.extraction_tier), [1, 1, 1]);
  assert.deepEqual(rows.map((r) => r.content).sort(), [
    `${name} is allergic to peanuts`,
    `${name} lives in Ghent`,
    `To reset ${name}'s thermostat, hold the power button for ten seconds`,
  ].sort());
}

const cases: [string, FakeReply][] = [
  ['slow past the timeout', { kind: 'hang' }],
  ['returning non-JSON', { kind: 'content', content: 'I am sorry, I cannot produce JSON today.' }],
  ['returning JSON without a memories array', { kind: 'content', content: '{"facts":["Ghent"]}' }],
  ['returning only invalid items', { kind: 'memories', memories: [{ content: 'x', memory_type: 'opinion', confidence: 2 }] }],
  ['refusing', { kind: 'refusal', refusal: 'I cannot help with that.' }],
  ['failing with HTTP 500', { kind: 'status', status: 500 }],
  ['answering with a body that is not a completion', { kind: 'raw', body: '<html>bad gateway</html>' }],
];

describe('extractor fallback to tier-1 rules', () => {
  test('endpoint unreachable', () => endsWithRules(down, 'fb-down'));

  for (const [name, reply] of cases) {
    test(`endpoint ${name}`, async () => {
      llm.reply = reply;
      const count = llm.requests.length;
      await endsWithRules(flaky, `fb-${name.split(' ')[0]}-${name.length}`);
      assert.equal(llm.requests.length, count + 1, 'the endpoint was asked once (no retries)');
    });
  }
});

test('a request the endpoint drops unanswered (a kept-alive socket it closed) is sent once more: tier 2, not the rules', async () => {
  llm.reply = { kind: 'memories', memories: [{ content: 'fb-drop sails on Sundays', memory_type: 'semantic', confidence: 0.9 }] };
  llm.dropNext = 1;
  const count = llm.requests.length;
  const id = (await post(flaky.base, '/v1/episodes/start', { participants: ['fb-drop'] })).body.episode_id;
  await post(flaky.base, `/v1/episodes/${id}/message`, { role: 'user', content: 'I sail on Sundays.' });
  const end = await post(flaky.base, `/v1/episodes/${id}/end`, {});
  assert.equal(end.status, 200);
  assert.equal(end.body.extraction_tier, 2);
  assert.equal(llm.requests.length, count + 2, 'asked twice: the dropped request and its one retry');
  assert.deepEqual(extractedRows(flaky, id).map((r) => r.content), ['fb-drop sails on Sundays']);
});
