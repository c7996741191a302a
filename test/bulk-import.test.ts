// Bulk writes (issue 26, docs/time.md), over HTTP on either backend: POST /v1/episodes/import
// stores a whole dated conversation in one call (2,000 messages here), ended and extracted;
// POST /v1/remember/batch stores the valid facts and reports the others by index and field; too
// many items, a body over the limit or a bad time change nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { get, post, startTestService, type TestService } from './support/service.js';
import { untilEmbedded } from './support/embedded.js';
import { assertChain, contents, iso, T2021, T2022, T2023 } from './support/timeline.js';

let t: TestService;

before(async () => {
  // The hashing embedder: the file ranks 2,000 imported turns with every vector attached, and
  // waiting for USE-lite to embed them cost ~34 s of the run; what is tested here is the import
  // (its turns, their times and order), not the embedding. Ranking with USE-lite's vectors
  // attached is covered by recall-engine, recall-explain and tenant-lexical-statistics.
  t = await startTestService({ SERVICE_EMBEDDER: 'hash' });
});
after(() => t.close());

const stats = async () => (await get(t.base, '/v1/stats')).body;

describe('episodes/import', () => {
  test('2,000 dated messages in one call: stored in order with their times, the episode ended, facts extracted from when it took place', async () => {
    const start = Date.parse('2023-05-08T10:00:00Z');
    const messages = Array.from({ length: 2000 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: i === 1000 ? 'I live in Valparaiso' : `imported turn number ${i} about ocelots`,
      occurred_at: new Date(start + i * 60_000).toISOString(),
    }));
    const before = await stats();
    const r = await post(t.base, '/v1/episodes/import', { participants: ['imp-ana', 'imp-bot'], started_at: '2023-05-08T12:00:00+02:00', messages });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.match(r.body.episode_id, /^[0-9a-f-]{36}$/);
    assert.ok(r.body.memories_created >= 1, JSON.stringify(r.body));
    assert.equal(r.body.extraction_tier, 1);
    const afterImport = await stats();
    assert.equal(afterImport.episodic_memories - before.episodic_memories, 2000);

    // 2,000 near-identical turns: rank them as users do, with every vector attached (support/embedded.ts).
    await untilEmbedded(t.service);
    const turn = (await post(t.base, '/v1/recall', { query: 'imported turn number 1234 ocelots', types: ['episodic'], limit: 1 })).body.memories[0];
    assert.equal(turn.content, 'imported turn number 1234 about ocelots');
    assert.equal(turn.occurred_at, new Date(start + 1234 * 60_000).toISOString().replace('Z', '+00:00'));
    assert.equal(turn.role, 'user');
    assert.equal(turn.episode_id, r.body.episode_id);

    // The extracted fact became true when the conversation took place.
    const fact = (await post(t.base, '/v1/recall', { query: 'where does imp-ana live Valparaiso', entity: 'imp-ana', types: ['semantic'] })).body.memories[0];
    assert.match(fact.content, /Valparaiso/);
    assert.equal(fact.occurred_at, '2023-05-08T10:00:00.000+00:00');

    const grouped = (await post(t.base, '/v1/recall_grouped', { query: 'ocelots', limit: 5 })).body;
    assert.equal(grouped.groups.find((g: any) => g.session_id === r.body.episode_id).session_time, '2023-05-08T10:00:00.000+00:00');

    // Stored ended: no more messages.
    const more = await post(t.base, `/v1/episodes/${r.body.episode_id}/message`, { role: 'user', content: 'late' });
    assert.equal(more.status, 404);
  });

  test("a message without occurred_at was said when the one before it was (the first: the episode's started_at)", async () => {
    const times = [undefined, undefined, '2023-05-08T10:30:00Z', undefined];
    const r = await post(t.base, '/v1/episodes/import', {
      participants: ['imp-undated'], started_at: '2023-05-08T12:00:00+02:00',
      messages: times.map((occurred_at, i) => ({ role: 'user', content: `undated import turn ${i}`, ...(occurred_at ? { occurred_at } : {}) })),
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const turns = (await post(t.base, '/v1/inspect', { entity: 'imp-undated' })).body.episodic
      .sort((a: any, b: any) => a.seq - b.seq).map((m: any) => [m.content, m.occurred_at]);
    assert.deepEqual(turns, [
      ['undated import turn 0', '2023-05-08T10:00:00.000+00:00'], ['undated import turn 1', '2023-05-08T10:00:00.000+00:00'],
      ['undated import turn 2', '2023-05-08T10:30:00.000+00:00'], ['undated import turn 3', '2023-05-08T10:30:00.000+00:00'],
    ]);
    // In time order, an import's turns stay in conversation order (recall_grouped's chronological order reads occurred_at).
    const grouped = (await post(t.base, '/v1/recall_grouped', { query: 'undated import turn', limit: 10 })).body;
    const group = grouped.groups.find((g: any) => g.session_id === r.body.episode_id);
    assert.equal(group.session_time, '2023-05-08T10:00:00.000+00:00');
  });

  test('a bad time in one message is 400 naming it, and nothing of the conversation is stored', async () => {
    const before = await stats();
    const messages = Array.from({ length: 10 }, (_, i) => ({ role: 'user', content: `m${i}`, occurred_at: i === 5 ? '2023-02-30T10:00:00Z' : '2023-02-01T10:00:00Z' }));
    const r = await post(t.base, '/v1/episodes/import', { participants: ['imp-bad'], messages });
    assert.equal(r.status, 400);
    assert.match(r.body.error, /messages\[5\]\.occurred_at/);
    const wrongShape = await post(t.base, '/v1/episodes/import', { participants: ['imp-bad'], messages: [{ role: 'user', content: 'x', occurred_at: 'May 5th' }] });
    assert.equal(wrongShape.status, 400);
    assert.match(wrongShape.body.error, /messages\[0\]\.occurred_at/);
    assert.deepEqual(await stats(), before);
  });
});

describe('remember/batch', () => {
  test('items with errors are reported at their index and field; the valid ones are stored, in order', async () => {
    const before = await stats();
    const r = await post(t.base, '/v1/remember/batch', {
      facts: [
        { entity: 'bat-ana', fact: 'bat-ana plays the oboe' },
        { entity: 'bat-ana' },
        { entity: 'bat-ana', fact: 'bat-ana lives in Quito', valid_from: 'last May' },
        { entity: 'bat-ana', fact: 'bat-ana owns a kayak', confidence: 2 },
        { entity: 'bat-ana', fact: 'bat-ana likes figs', confidence: 0.5, valid_from: T2022 },
        { entity: '', fact: 'nameless' },
      ],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.stored, 2);
    assert.equal(r.body.failed, 4);
    assert.deepEqual(r.body.results.map((x: any) => x.index), [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(r.body.results.map((x: any) => x.error?.field ?? null),
      [null, 'facts[1].fact', 'facts[2].valid_from', 'facts[3].confidence', null, 'facts[5].entity']);
    for (const x of r.body.results.filter((x: any) => x.error)) {
      assert.ok(x.error.error.startsWith(x.error.field), x.error.error);
      assert.equal(typeof x.error.code, 'string');
      assert.equal(x.memory, undefined);
    }
    assert.equal(r.body.results[0].memory.content, 'bat-ana plays the oboe');
    assert.equal(r.body.results[4].memory.confidence, 0.5);
    assert.equal(r.body.results[4].memory.occurred_at, '2022-03-01T09:00:00.000+00:00');
    assert.equal((await stats()).semantic_memories - before.semantic_memories, 2);
  });

  test('a reversed timeline in one batch arrives superseded, as one call each would', async () => {
    const r = await post(t.base, '/v1/remember/batch', {
      facts: [['Lisbon', T2023], ['Madrid', T2022], ['Berlin', T2021]].map(([city, at]) => ({ entity: 'bat-bo', fact: `bat-bo lives in ${city}`, valid_from: at })),
    });
    assert.equal(r.body.stored, 3);
    await assertChain(t.base, 'bat-bo');
  });

  test('each result reports what is stored after the whole batch: superseded and reinforced by later items', async () => {
    const r = await post(t.base, '/v1/remember/batch', {
      facts: [
        { entity: 'bat-cy', fact: 'bat-cy lives in Berlin', valid_from: T2021, confidence: 0.5 },
        { entity: 'bat-cy', fact: 'bat-cy lives in Lisbon', valid_from: T2023 },
        { entity: 'bat-cy', fact: 'bat-cy lives in Madrid', valid_from: T2022 },
        { entity: 'bat-cy', fact: 'bat-cy lives in Berlin', valid_from: T2021, confidence: 0.9 },
      ],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const [berlin, lisbon, madrid, again] = r.body.results.map((x: any) => x.memory);
    // Berlin was superseded by Lisbon (item 1), then by Madrid (item 2), which Lisbon supersedes.
    assert.deepEqual([berlin.superseded_by, berlin.valid_until], [madrid.id, iso(T2022)]);
    assert.deepEqual([madrid.superseded_by, madrid.valid_until], [lisbon.id, iso(T2023)]);
    assert.deepEqual([lisbon.superseded_by, lisbon.valid_until], [null, null]);
    // Heard again with more confidence: one memory, both results at the stronger confidence.
    assert.equal(again.id, berlin.id);
    assert.equal(berlin.confidence, 0.9);
    // Every result is what a read after the batch finds.
    for (const memory of [berlin, lisbon, madrid, again]) {
      const stored = (await get(t.base, `/v1/memories/${memory.id}/history`)).body.memory;
      for (const field of ['confidence', 'valid_until', 'superseded_by', 'occurred_at']) assert.deepEqual(memory[field], stored[field], `${memory.content}: ${field}`);
    }
  });

  test('more than 1,000 items, or a body over the limit, is refused whole: nothing is stored', async () => {
    const before = await stats();
    const many = await post(t.base, '/v1/remember/batch', { facts: Array.from({ length: 1001 }, (_, i) => ({ entity: 'bat-many', fact: `fact ${i}` })) });
    assert.equal(many.status, 400);
    assert.match(many.body.error, /facts/);
    const huge = await post(t.base, '/v1/remember/batch', { facts: Array.from({ length: 600 }, (_, i) => ({ entity: 'bat-huge', fact: `${i} ${'x'.repeat(2000)}` })) });
    assert.equal(huge.status, 413);
    assert.deepEqual(await stats(), before);
    assert.deepEqual(contents((await post(t.base, '/v1/recall', { query: 'fact', entity: 'bat-many' })).body), []);
  });
});
