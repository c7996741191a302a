// Event time and supersession (issue 26, docs/time.md), over HTTP on either backend
// (scripts/test-postgres.mjs runs it on PostgreSQL): valid_from / started_at / occurred_at,
// a Berlin → Madrid → Lisbon chain sent in order and in reverse, as_of between each pair,
// include_superseded, compatible facts untouched, equal times still reported as contradictions,
// since/until, bad times refused with nothing stored, every field kept across a restart and
// an entity delete + restore, and one memory retracted (DELETE /v1/memories/{id}) and restored.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { del, get, post, startTestService, tempDir, type TestService } from './support/service.js';
import { backendEnv, onPostgres } from './support/test-backend.js';
import * as timeline from './support/timeline.js';
import { contents, iso, T2021, T2022, T2023 } from './support/timeline.js';

let storage: Record<string, string>;
let t: TestService;

const remember = (entity: string, fact: string, validFrom?: string) => timeline.remember(t.base, entity, fact, validFrom);
const recall = (body: Record<string, unknown>) => timeline.recall(t.base, body);
const assertChain = (who: string) => timeline.assertChain(t.base, who);
const storeAll = (who: string) => timeline.storeChain(t.base, who);

before(async () => {
  // Named storage, so the service can be stopped and started again on the same rows.
  storage = onPostgres ? await backendEnv() : { SERVICE_PATH: join(tempDir(), 'memory.db') };
  t = await startTestService(storage);
});
after(() => t.close());

describe('supersession', () => {
  test('Berlin → Madrid → Lisbon sent in order: each later fact supersedes the one before', async () => {
    const berlin = await remember('tl-ana', 'tl-ana lives in Berlin', T2021);
    assert.equal(berlin.occurred_at, iso(T2021));
    assert.equal(berlin.valid_until, null);
    await remember('tl-ana', 'tl-ana lives in Madrid', T2022);
    await remember('tl-ana', 'tl-ana lives in Lisbon', T2023);
    await assertChain('tl-ana');
  });

  test('sent in reverse: each older fact arrives already superseded', async () => {
    await remember('tl-bo', 'tl-bo lives in Lisbon', T2023);
    const madrid = await remember('tl-bo', 'tl-bo lives in Madrid', T2022);
    assert.equal(madrid.valid_until, iso(T2023), 'the answer says it arrived superseded');
    assert.notEqual(madrid.superseded_by, null);
    await remember('tl-bo', 'tl-bo lives in Berlin', T2021);
    await assertChain('tl-bo');
  });

  test('a middle value arriving last is put between the two around it', async () => {
    await remember('tl-mid', 'tl-mid lives in Berlin', T2021);
    await remember('tl-mid', 'tl-mid lives in Lisbon', T2023);
    await remember('tl-mid', 'tl-mid lives in Madrid', T2022);
    await assertChain('tl-mid');
  });

  test('one attribute however it is said: other predicates and spellings supersede too', async () => {
    const pairs: [string, string, string][] = [
      ['tl-ph1', 'tl-ph1 lives in Berlin', 'tl-ph1 relocated to Madrid'],
      ['tl-ph2', 'tl-ph2 works at Lumen Energy', 'tl-ph2 is employed by Nimbus Cloud'],
      ['tl-ph3', 'tl-ph3 works for Lumen Energy', 'tl-ph3 took a job at Nimbus Cloud'],
      ['tl-ph4', "tl-ph4's favorite color is green", "tl-ph4's favourite colour is blue"],
      ['tl-ph5', "tl-ph5's favourite colour is green", 'tl-ph5 likes blue best of all colours'],
    ];
    for (const [who, before, later] of pairs) {
      const old = await remember(who, before, T2021);
      const now = await remember(who, later, T2022);
      const all = await recall({ query: later, entity: who, include_superseded: true });
      const stored = all.memories.find((m) => m.id === old.id);
      assert.equal(stored?.superseded_by, now.id, `${before} → ${later}`);
      assert.deepEqual(contents(await recall({ query: later, entity: who })), [later]);
    }
  });

  test('compatible facts never supersede each other', async () => {
    await remember('tl-cy', 'tl-cy likes tea', T2021);
    await remember('tl-cy', 'tl-cy likes coffee', T2022);
    await remember('tl-cy', 'tl-cy lives in Porto', T2022);
    await remember('tl-dy', 'tl-dy lives in Rome', T2023); // another owner's value is no later value of tl-cy's
    const r = await recall({ query: 'tl-cy likes tea coffee lives', entity: 'tl-cy' });
    assert.deepEqual(contents(r), ['tl-cy likes coffee', 'tl-cy likes tea', 'tl-cy lives in Porto']);
    assert.ok(r.memories.every((m) => m.valid_until === null && m.superseded_by === null));
  });

  test('facts from the same moment stay side by side and are reported as a contradiction', async () => {
    const a = await remember('tl-eq', 'tl-eq works at Acme', T2022);
    const b = await remember('tl-eq', 'tl-eq works at Globex', T2022);
    const r = await recall({ query: 'where does tl-eq work', entity: 'tl-eq' });
    assert.deepEqual(contents(r), ['tl-eq works at Acme', 'tl-eq works at Globex']);
    assert.equal(r.contradictions.length, 1);
    assert.deepEqual([...r.contradictions[0].memory_ids].sort(), [a.id, b.id].sort());
    // inspect flags the same pair among the entity's facts (the console marks both cards).
    await remember('tl-eq', 'tl-eq likes figs', T2022);
    const inspected = (await post(t.base, '/v1/inspect', { entity: 'tl-eq' })).body;
    assert.equal(inspected.semantic.length, 3);
    assert.deepEqual(inspected.contradictions.map((c: any) => [...c.memory_ids].sort()), [[a.id, b.id].sort()]);
    // Superseded facts never held beside their replacement: listing them too flags nothing.
    await storeAll('tl-inspect');
    const chain = (await post(t.base, '/v1/inspect', { entity: 'tl-inspect', include_superseded: true })).body;
    assert.deepEqual([chain.semantic.length, chain.contradictions], [3, []]);
  });

  test('without valid_from the later arrival supersedes; the same words again later bring the value back', async () => {
    await remember('tl-now', 'tl-now lives in Berlin');
    await remember('tl-now', 'tl-now lives in Madrid');
    assert.deepEqual(contents(await recall({ query: 'tl-now lives', entity: 'tl-now' })), ['tl-now lives in Madrid']);
    await remember('tl-now', 'tl-now lives in Berlin');
    assert.deepEqual(contents(await recall({ query: 'tl-now lives', entity: 'tl-now' })), ['tl-now lives in Berlin']);
    const all = await recall({ query: 'tl-now lives', entity: 'tl-now', include_superseded: true });
    assert.equal(all.memories.length, 3);
  });
});

describe('history', () => {
  test('a memory\'s history: its attribute\'s chain in time order and its life events; an unknown id is 404', async () => {
    const all = await recall({ query: 'where does tl-ana live', entity: 'tl-ana', include_superseded: true });
    const madrid = all.memories.find((m) => m.content.endsWith('Madrid'));
    const r = await get(t.base, `/v1/memories/${madrid.id}/history`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.memory.id, madrid.id);
    assert.deepEqual(r.body.chain.map((m: any) => m.content), ['tl-ana lives in Berlin', 'tl-ana lives in Madrid', 'tl-ana lives in Lisbon']);
    assert.deepEqual(r.body.chain.map((m: any) => m.occurred_at), [iso(T2021), iso(T2022), iso(T2023)]);
    // In time order: superseded as of 2023 (event time) comes before stored (now, when it arrived).
    // (Then 'reinforced' once the recalls above are applied: reinforcement is written in the background.)
    assert.deepEqual(r.body.events.map((e: any) => e.event).slice(0, 2), ['superseded', 'stored']);
    assert.ok(r.body.events.slice(2).every((e: any) => e.event === 'reinforced' && e.count >= 1));
    assert.ok(Date.parse(r.body.events[1].at) > Date.now() - 600_000);
    const superseded = r.body.events.find((e: any) => e.event === 'superseded');
    assert.equal(superseded.at, iso(T2023));
    assert.equal(superseded.memory_id, madrid.superseded_by);
    const compatible = (await recall({ query: 'tl-cy likes tea', entity: 'tl-cy' })).memories.find((m) => m.content === 'tl-cy likes tea');
    assert.deepEqual((await get(t.base, `/v1/memories/${compatible.id}/history`)).body.chain.map((m: any) => m.id), [compatible.id]);
    const unknown = await get(t.base, '/v1/memories/no-such-memory/history');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'NOT_FOUND');
  });
});

describe('episodes in time', () => {
  test('started_at and occurred_at are kept; the turn carries its role and episode; session_time is started_at', async () => {
    const started = await post(t.base, '/v1/episodes/start', { participants: ['tl-eve'], started_at: '2023-05-08T13:56:00+02:00' });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const id = started.body.episode_id;
    // Said in 2023, arriving now: the episode must not count as expired.
    for (const [i, text] of ['I adopted a greyhound called Zephyr', 'Zephyr sounds lovely'].entries()) {
      const r = await post(t.base, `/v1/episodes/${id}/message`, {
        role: i === 0 ? 'user' : 'assistant', content: text, occurred_at: `2023-05-08T14:0${i}:00+02:00`,
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const r = await recall({ query: 'greyhound Zephyr', types: ['episodic'] });
    const turn = r.memories.find((m) => m.content.startsWith('I adopted'));
    assert.equal(turn.occurred_at, '2023-05-08T12:00:00.000+00:00');
    assert.equal(turn.role, 'user');
    assert.equal(turn.episode_id, id);
    assert.equal('valid_until' in turn, false, 'episodic memories have no validity');

    const grouped = (await post(t.base, '/v1/recall_grouped', { query: 'greyhound Zephyr' })).body;
    const group = grouped.groups.find((g: any) => g.session_id === id);
    assert.equal(group.session_time, '2023-05-08T11:56:00.000+00:00');

    // since / until filter on occurred_at.
    assert.equal((await recall({ query: 'greyhound Zephyr', since: '2023-05-08T12:00:30Z' })).memories.some((m) => m.content.startsWith('I adopted')), false);
    assert.ok((await recall({ query: 'greyhound Zephyr', until: '2023-05-08T12:00:30Z' })).memories.some((m) => m.content.startsWith('I adopted')));
    assert.equal((await recall({ query: 'greyhound Zephyr', until: '2023-05-08T11:00:00Z' })).memories.length, 0);
  });
});

describe('bad times', () => {
  test('a time that is not ISO 8601 with an offset, or not in the calendar, is 400 naming the field; nothing is stored', async () => {
    const before = (await get(t.base, '/v1/stats')).body;
    const episode = (await post(t.base, '/v1/episodes/start', { participants: ['tl-bad'] })).body.episode_id;
    const after0 = (await get(t.base, '/v1/stats')).body;
    const cases: [string, Record<string, unknown>, string][] = [
      ['/v1/remember', { entity: 'tl-bad', fact: 'x lives in y', valid_from: 'yesterday' }, 'valid_from'],
      ['/v1/remember', { entity: 'tl-bad', fact: 'x lives in y', valid_from: '2023-05-08' }, 'valid_from'],
      ['/v1/remember', { entity: 'tl-bad', fact: 'x lives in y', valid_from: '2023-02-30T10:00:00Z' }, 'valid_from'],
      ['/v1/remember', { entity: 'tl-bad', fact: 'x lives in y', valid_from: '2023-05-08T10:00:00' }, 'valid_from'],
      ['/v1/episodes/start', { participants: ['tl-bad2'], started_at: 'last week' }, 'started_at'],
      [`/v1/episodes/${episode}/message`, { role: 'user', content: 'hi', occurred_at: '08/05/2023 10:00' }, 'occurred_at'],
      ['/v1/recall', { query: 'x', as_of: 'now' }, 'as_of'],
      ['/v1/recall', { query: 'x', as_of: '2023-13-01T00:00:00Z' }, 'as_of'],
      ['/v1/recall_grouped', { query: 'x', since: '2023-04-31T00:00:00Z' }, 'since'],
      ['/v1/recall', { query: 'x', until: 17 }, 'until'],
      ['/v1/recall', { query: 'x', since: '2023-06-01T00:00:00Z', until: '2023-05-01T00:00:00Z' }, 'since'],
      ['/v1/recall_grouped', { query: 'x', since: '2023-06-01T00:00:00+02:00', until: '2023-05-31T21:00:00Z' }, 'since'],
    ];
    for (const [path, body, field] of cases) {
      const r = await post(t.base, path, body);
      assert.ok(r.status === 400 || r.status === 422, `${path} ${JSON.stringify(body)} → ${r.status}`);
      assert.ok(r.body.error.includes(field), `${r.body.error} names ${field}`);
      assert.equal(typeof r.body.code, 'string');
    }
    assert.deepEqual((await get(t.base, '/v1/stats')).body, after0);
    assert.equal(after0.episodic_memories, before.episodic_memories);
  });
});

describe('kept', () => {
  test('across a restart', async () => {
    await t.close();
    t = await startTestService(storage);
    await assertChain('tl-ana');
    await assertChain('tl-bo');
  });

  test('across an entity delete and its restore', async () => {
    const deleted = await del(t.base, '/v1/entities/tl-mid');
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.deepEqual(contents(await recall({ query: 'where does tl-mid live', entity: 'tl-mid', include_superseded: true })), []);
    const restored = await post(t.base, `/v1/snapshots/${deleted.body.snapshot.snapshot_id}/restore`);
    assert.equal(restored.status, 200, JSON.stringify(restored.body));
    await assertChain('tl-mid');
  });
});

describe('one memory retracted', () => {
  const history = async (id: string) => (await get(t.base, `/v1/memories/${id}/history`)).body;

  test('retracting the current value makes the previous one current; its restore puts the chain back, with a restored event', async () => {
    await timeline.storeChain(t.base, 'tl-ret');
    const all = await recall({ query: 'where does tl-ret live', entity: 'tl-ret', include_superseded: true });
    const byCity = new Map(all.memories.map((m) => [m.content.split(' ').pop(), m]));
    const [madrid, lisbon] = [byCity.get('Madrid'), byCity.get('Lisbon')];

    const deleted = await del(t.base, `/v1/memories/${lisbon.id}`);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal(deleted.body.forgotten_count, 1);
    assert.equal(deleted.body.snapshot.memory_count, 1);
    assert.equal(deleted.body.snapshot.semantic_count, 1);
    const now = await recall({ query: 'where does tl-ret live', entity: 'tl-ret' });
    assert.deepEqual(contents(now), ['tl-ret lives in Madrid']);
    assert.equal(now.memories[0].superseded_by, null);
    assert.equal(now.memories[0].valid_until, null);
    assert.equal((await get(t.base, `/v1/memories/${lisbon.id}/history`)).status, 404);
    // Gone, not hidden: a second delete finds nothing; the entity and its other memories stay.
    assert.equal((await del(t.base, `/v1/memories/${lisbon.id}`)).status, 404);
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'tl-ret', include_superseded: true })).body.semantic.length, 2);

    const restored = await post(t.base, `/v1/snapshots/${deleted.body.snapshot.snapshot_id}/restore`);
    assert.equal(restored.status, 200, JSON.stringify(restored.body));
    assert.equal(restored.body.restored_count, 1);
    await assertChain('tl-ret');
    const back = await history(lisbon.id);
    const events = back.events.map((e: { event: string }) => e.event);
    assert.equal(events[0], 'stored');
    assert.ok(events.includes('restored'), events.join(' '));
    assert.ok(Date.parse(back.events.find((e: { event: string }) => e.event === 'restored').at) >= Date.parse(deleted.body.snapshot.captured_at));
    assert.equal((await history(madrid.id)).memory.superseded_by, lisbon.id);
  });

  test('a value in the middle leaves no gap: the one before runs on to the one after', async () => {
    await timeline.storeChain(t.base, 'tl-gap', [2023, 2021, 2022]);
    const all = await recall({ query: 'where does tl-gap live', entity: 'tl-gap', include_superseded: true });
    const byCity = new Map(all.memories.map((m) => [m.content.split(' ').pop(), m]));
    const [berlin, madrid, lisbon] = ['Berlin', 'Madrid', 'Lisbon'].map((c) => byCity.get(c));
    const deleted = await del(t.base, `/v1/memories/${madrid.id}`);
    assert.equal(deleted.status, 200);
    const before = (await history(berlin.id)).memory;
    assert.equal(before.superseded_by, lisbon.id);
    assert.equal(before.valid_until, iso(T2023));
    assert.deepEqual(contents(await recall({ query: 'where does tl-gap live', entity: 'tl-gap', as_of: '2022-06-01T00:00:00Z' })), ['tl-gap lives in Berlin']);
    // A value stored while it was gone is placed around it when it comes back.
    assert.equal((await post(t.base, `/v1/snapshots/${deleted.body.snapshot.snapshot_id}/restore`)).status, 200);
    await assertChain('tl-gap');
  });

  test('an episodic turn can be retracted too; an unknown id is 404 and changes nothing', async () => {
    const episode = (await post(t.base, '/v1/episodes/start', { participants: ['tl-turns'] })).body.episode_id;
    await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'my locker code is 4417' });
    await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'the weather is fine' });
    const turns = (await post(t.base, '/v1/inspect', { entity: 'tl-turns' })).body.episodic;
    const code = turns.find((m: { content: string }) => m.content.includes('4417'));
    const deleted = await del(t.base, `/v1/memories/${code.id}`);
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.snapshot.episodic_count, 1);
    assert.deepEqual((await post(t.base, '/v1/inspect', { entity: 'tl-turns' })).body.episodic.map((m: { content: string }) => m.content), ['the weather is fine']);
    const stats = (await get(t.base, '/v1/stats')).body;
    const unknown = await del(t.base, '/v1/memories/no-such-memory');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'NOT_FOUND');
    assert.deepEqual((await get(t.base, '/v1/stats')).body, stats);
  });
});

describe('time in the query', () => {
  test('a date expression reads the memories of that time, relative to as_of; none of that time: as if it named none', async () => {
    await timeline.storeChain(t.base, 'tl-q');
    // The facts valid at some moment of May 2022 (Madrid, from March 2022), whatever replaced them since.
    assert.deepEqual(contents(await recall({ query: 'where did tl-q live in May 2022', entity: 'tl-q' })), ['tl-q lives in Madrid']);
    // "last year" as of mid-2022 is 2021: Berlin (Madrid only came in 2022).
    assert.deepEqual(contents(await recall({ query: 'where did tl-q live last year', entity: 'tl-q', as_of: '2022-06-01T00:00:00Z' })), ['tl-q lives in Berlin']);
    // The client's own interval wins over the text's.
    assert.deepEqual(contents(await recall({ query: 'where did tl-q live in May 2022', entity: 'tl-q', since: '2023-01-01T00:00:00Z' })), ['tl-q lives in Lisbon']);
    // Nothing of 1999: the recall answers as the query without it would (the current value).
    assert.deepEqual(contents(await recall({ query: 'where did tl-q live in May 1999', entity: 'tl-q' })), ['tl-q lives in Lisbon']);

    // Turns: "yesterday" relative to as_of is the day before it, by occurred_at.
    const imported = await post(t.base, '/v1/episodes/import', { participants: ['tl-qt'], messages: [
      { role: 'user', content: 'tl-qt booked the ferry to Porto', occurred_at: '2023-05-07T10:00:00Z' },
      { role: 'user', content: 'tl-qt booked the train to Porto', occurred_at: '2023-05-08T10:00:00Z' },
    ] });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    const said = await recall({ query: 'what did tl-qt book yesterday', entity: 'tl-qt', types: ['episodic'], as_of: '2023-05-09T09:00:00Z' });
    assert.deepEqual(contents(said), ['tl-qt booked the train to Porto']);
    const both = await recall({ query: 'what did tl-qt book', entity: 'tl-qt', types: ['episodic'], as_of: '2023-05-09T09:00:00Z' });
    assert.equal(both.memories.length, 2);
  });

  test('a question asking for a time ("when did …") puts the turns that say when first; the same words asked otherwise do not', async () => {
    const imported = await post(t.base, '/v1/episodes/import', { participants: ['tl-wd'], messages: [
      { role: 'user', content: 'tl-wd: the aquarium! the aquarium sharks, the aquarium jellyfish, aquarium everything' },
      { role: 'user', content: 'tl-wd: we went to the aquarium last Saturday' },
      { role: 'user', content: 'tl-wd: the aquarium café was closed' },
    ] });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    const ask = async (query: string) => (await post(t.base, '/v1/recall', { query, entity: 'tl-wd', types: ['episodic'], limit: 3, explain: true })).body
      .memories as { content: string; explanation: { signals: { signal: string; contribution: number }[] } }[];
    const timeOf = (m: { explanation: { signals: { signal: string; contribution: number }[] } }) => m.explanation.signals.find((s) => s.signal === 'time')!.contribution;
    const plain = await ask('tl-wd go to the aquarium');
    assert.equal(plain.length, 3);
    assert.notEqual(plain[0].content, 'tl-wd: we went to the aquarium last Saturday', 'without the question form the dated turn is not first');
    assert.ok(plain.every((m) => timeOf(m) === 0));
    for (const query of ['When did tl-wd go to the aquarium?', 'what day did tl-wd go to the aquarium', 'how long ago did tl-wd go to the aquarium?']) {
      const asked = await ask(query);
      assert.equal(asked[0].content, 'tl-wd: we went to the aquarium last Saturday', query);
      assert.ok(timeOf(asked[0]) > 0, query);
      assert.ok(asked.slice(1).every((m) => timeOf(m) === 0), query);
    }
    // "when" that asks for no time (a subordinate clause) changes nothing.
    const clause = await ask('what did tl-wd say when we were at the aquarium');
    assert.ok(clause.every((m) => timeOf(m) === 0));
  });
});
