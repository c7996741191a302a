// Tier-2 extraction at `end`, against a stand-in OpenAI-compatible endpoint (the real SDK path).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { get, post, startTestService, type TestService } from './support/service.js';
import { FakeLlm } from './support/fake-llm.js';
import { extractedRows } from './support/db.js';

let t: TestService;
let llm: FakeLlm;
before(async () => {
  llm = await FakeLlm.start();
  t = await startTestService({
    SERVICE_EMBEDDER: 'hash',
    SERVICE_EXTRACTOR_URL: llm.url,
    SERVICE_EXTRACTOR_MODEL: 'fake-extractor-1',
    SERVICE_EXTRACTOR_API_KEY: 'sk-test-extractor',
  });
});
after(async () => {
  await t.close();
  await llm.close();
});

async function episode(participants: string[], messages: [string, string][]): Promise<string> {
  const id = (await post(t.base, '/v1/episodes/start', { participants })).body.episode_id;
  for (const [role, content] of messages) {
    assert.equal((await post(t.base, `/v1/episodes/${id}/message`, { role, content })).status, 200);
  }
  return id;
}

const stored = (s: any) => s.semantic_memories + s.procedural_memories;

describe('LLM extraction', () => {
  test('stores the endpoint\'s memories with tier 2, counted exactly, in their session', async () => {
    const id = await episode(['ex-tess', 'ex-agent'], [
      ['user', 'I moved to Porto last year'],
      ['assistant', 'Nice! How do you take your coffee?'],
      ['user', 'Espresso, and I grind the beans very fine first'],
    ]);
    llm.reply = {
      kind: 'memories',
      memories: [
        { content: 'Tess lives in Porto', memory_type: 'semantic', confidence: 0.9 },
        { content: 'To make Tess\'s espresso, grind the beans very fine', memory_type: 'procedural', confidence: 0.8 },
      ],
    };
    const before = (await get(t.base, '/v1/stats')).body;
    const end = await post(t.base, `/v1/episodes/${id}/end`, { outcome: 'success' });
    assert.equal(end.status, 200);
    const after = (await get(t.base, '/v1/stats')).body;
    assert.equal(end.body.memories_created, 2);
    assert.equal(end.body.extraction_tier, 2);
    assert.equal(stored(after) - stored(before), 2);

    const rows = extractedRows(t, id);
    assert.deepEqual(rows.map((r) => [r.memory_type, r.extraction_tier]), [['semantic', 2], ['procedural', 2]]);
    assert.equal(rows[0].confidence, 0.9);
    assert.equal(rows[1].confidence, 0.92, 'a successful outcome raises procedural confidence (0.8 × 1.15)');

    const inspect = (await post(t.base, '/v1/inspect', { entity: 'ex-tess' })).body;
    assert.deepEqual(inspect.semantic.map((m: any) => m.content), ['Tess lives in Porto']);
    assert.equal(inspect.procedural.length, 1);

    const recall = await post(t.base, '/v1/recall', { query: 'Porto', entity: 'ex-tess', types: ['semantic'] });
    assert.equal(recall.body.memories[0].content, 'Tess lives in Porto');

    const grouped = await post(t.base, '/v1/recall_grouped', { query: 'Tess Porto', order: 'relevance' });
    const session = grouped.body.groups.find((g: any) => g.memories.some((m: any) => m.content === 'Tess lives in Porto'));
    assert.equal(session.session_id, id, 'the extracted memory is grouped under its episode');
  });

  test('sends one chat completion with the contract\'s parameters and the transcript', async () => {
    const id = await episode(['ex-ivo'], [['user', 'I keep bees on my roof'], ['assistant', 'How many hives?']]);
    llm.reply = { kind: 'memories', memories: [] };
    const count = llm.requests.length;
    await post(t.base, `/v1/episodes/${id}/end`, {});
    assert.equal(llm.requests.length, count + 1);
    const request = llm.requests.at(-1)!;
    assert.equal(request.path, '/v1/chat/completions');
    assert.equal(request.headers.authorization, 'Bearer sk-test-extractor');
    assert.equal(request.body.model, 'fake-extractor-1');
    assert.deepEqual(request.body.response_format, { type: 'json_object' });
    assert.equal(request.body.temperature, 0);
    const [system, user] = request.body.messages;
    assert.equal(system.role, 'system');
    assert.match(system.content, /"memories"/);
    assert.equal(user.role, 'user');
    assert.match(user.content, /Subject: ex-ivo/);
    assert.match(user.content, /\[user\] I keep bees on my roof/);
    assert.match(user.content, /\[assistant\] How many hives\?/);
  });

  test('duplicates are stored once: repeated in one reply, already known, or extracted again', async () => {
    await post(t.base, '/v1/remember', { entity: 'ex-uma', fact: 'Uma plays the cello' });
    llm.reply = {
      kind: 'memories',
      memories: [
        { content: 'Uma plays the cello.', memory_type: 'semantic', confidence: 0.7 },
        { content: 'Uma owns a red kayak', memory_type: 'semantic', confidence: 0.8 },
        { content: 'uma owns a  red kayak', memory_type: 'semantic', confidence: 0.85 },
      ],
    };
    const first = await episode(['ex-uma'], [['user', 'I play the cello and I own a red kayak']]);
    const before = (await get(t.base, '/v1/stats')).body;
    assert.equal((await post(t.base, `/v1/episodes/${first}/end`, {})).body.memories_created, 1);
    const second = await episode(['ex-uma'], [['user', 'Did I mention my red kayak?']]);
    assert.equal((await post(t.base, `/v1/episodes/${second}/end`, {})).body.memories_created, 0);
    const after = (await get(t.base, '/v1/stats')).body;
    assert.equal(stored(after) - stored(before), 1);
    const semantic = (await post(t.base, '/v1/inspect', { entity: 'ex-uma' })).body.semantic;
    assert.deepEqual(semantic.map((m: any) => m.content).sort(), ['Uma owns a red kayak', 'Uma plays the cello']);
    assert.equal(semantic.find((m: any) => m.content === 'Uma owns a red kayak').confidence, 0.85, 'the stronger confidence is kept');
  });

  test('code fences and prose around the JSON are tolerated; invalid items are dropped', async () => {
    const memories = [
      { content: 'Vera speaks Finnish', memory_type: 'semantic', confidence: 0.9 },
      { content: 'Vera is tall', memory_type: 'semantic', confidence: 1.5 },
      { content: 'Vera said hello', memory_type: 'episodic', confidence: 0.9 },
      { content: '   ', memory_type: 'semantic', confidence: 0.9 },
      { content: 'Vera likes sauna', memory_type: 'semantic' },
      'Vera is a string',
    ];
    llm.reply = { kind: 'content', content: `Sure! Here you go:\n\`\`\`json\n${JSON.stringify({ memories })}\n\`\`\`\nAnything else?` };
    const id = await episode(['ex-vera'], [['user', 'Puhun suomea. I love the sauna.']]);
    const end = await post(t.base, `/v1/episodes/${id}/end`, {});
    assert.equal(end.body.memories_created, 1);
    assert.deepEqual(extractedRows(t, id).map((r) => [r.content, r.extraction_tier]), [['Vera speaks Finnish', 2]]);
  });

  test('an empty list is an answer: nothing stored and no rule fallback', async () => {
    llm.reply = { kind: 'memories', memories: [] };
    const id = await episode(['ex-walt'], [['user', 'I live in Oslo']]);
    const end = await post(t.base, `/v1/episodes/${id}/end`, {});
    assert.deepEqual([end.status, end.body], [200, { memories_created: 0, extraction_tier: 2 }]);
  });

  test('a failed episode lowers procedural confidence', async () => {
    llm.reply = { kind: 'memories', memories: [{ content: 'Restart the router to fix Xena\'s wifi', memory_type: 'procedural', confidence: 0.8 }] };
    const id = await episode(['ex-xena'], [['user', 'My wifi dropped again']]);
    assert.equal((await post(t.base, `/v1/episodes/${id}/end`, { outcome: 'failure' })).body.memories_created, 1);
    assert.equal(extractedRows(t, id)[0].confidence, 0.4);
  });

  test('an episode with no messages ends without calling the endpoint', async () => {
    const id = await episode(['ex-yuri'], []);
    const count = llm.requests.length;
    const end = await post(t.base, `/v1/episodes/${id}/end`, { outcome: 'partial' });
    // No model was asked: the answer says tier 1, as when the endpoint is down.
    assert.deepEqual([end.status, end.body], [200, { memories_created: 0, extraction_tier: 1 }]);
    assert.equal(llm.requests.length, count);
  });

  test('ends waiting on a slow endpoint do not take the pool away from recall', async () => {
    llm.reply = { kind: 'hang' };
    const ids = [];
    for (const city of ['Riga', 'Kaunas', 'Tartu']) ids.push(await episode([`ex-${city}`], [['user', `I live in ${city}`]]));
    const count = llm.requests.length;
    let settled = 0;
    // More ends than pool threads, all waiting on the endpoint at once.
    const ends = ids.map((id) => post(t.base, `/v1/episodes/${id}/end`, {}).finally(() => settled++));
    for (let i = 0; i < 600 && llm.requests.length < count + ids.length; i++) await sleep(10);
    assert.equal(llm.requests.length, count + ids.length);
    const recall = await post(t.base, '/v1/recall', { query: 'Riga' });
    assert.equal(recall.status, 200);
    assert.equal(settled, 0, 'recall was answered while every end still waited');
    llm.release({ kind: 'memories', memories: [{ content: 'Lives in the Baltics', memory_type: 'semantic', confidence: 0.9 }] });
    for (const end of await Promise.all(ends)) assert.deepEqual([end.status, end.body], [200, { memories_created: 1, extraction_tier: 2 }]);
  });
});
