// Every endpoint's success shape and defaults, against a real server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UUID, del, get, post, startTestService, type TestService } from './support/service.js';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(() => t.close());

// The spec's fields, and what event time adds to a semantic memory (docs/time.md): only added.
const TIME_KEYS = ['occurred_at', 'superseded_by', 'valid_until'];
const MEMORY_KEYS = ['confidence', 'content', 'id', 'memory_type', 'score', 'stability', ...TIME_KEYS].sort();

describe('health', () => {
  test('reports ok and the package version', async () => {
    const r = await get(t.base, '/v1/health');
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ok');
    assert.match(r.body.version, /^\d+\.\d+\.\d+/);
    assert.equal(r.headers.get('content-type'), 'application/json');
  });
});

describe('entities', () => {
  test('creates with default kind user, 201', async () => {
    const r = await post(t.base, '/v1/entities', { name: 'ent-default' });
    assert.equal(r.status, 201);
    assert.match(r.body.id, UUID);
    assert.deepEqual({ name: r.body.name, kind: r.body.kind }, { name: 'ent-default', kind: 'user' });
  });

  test('returns the existing entity for the same name', async () => {
    const first = await post(t.base, '/v1/entities', { name: 'ent-same', kind: 'agent' });
    const second = await post(t.base, '/v1/entities', { name: 'ent-same', kind: 'tool' });
    assert.equal(second.status, 201);
    assert.equal(second.body.id, first.body.id);
    assert.equal(second.body.kind, 'agent');
  });

  test('accepts every kind', async () => {
    for (const kind of ['agent', 'user', 'team', 'tool']) {
      const r = await post(t.base, '/v1/entities', { name: `kind-${kind}`, kind });
      assert.equal(r.body.kind, kind);
    }
  });
});

describe('remember', () => {
  test('stores a semantic fact with default confidence 0.8, 201', async () => {
    const r = await post(t.base, '/v1/remember', { entity: 'rem-user', fact: 'Rem likes sailing' });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body).sort(), ['confidence', 'content', 'extraction_tier', 'id', 'memory_type', 'stability', ...TIME_KEYS].sort());
    assert.equal(r.body.memory_type, 'semantic');
    assert.equal(r.body.confidence, 0.8);
    assert.equal(r.body.content, 'Rem likes sailing');
    assert.equal(r.body.extraction_tier, 1);
    assert.ok(r.body.stability > 0);
    assert.ok(!('score' in r.body));
  });

  test('creates an unknown entity', async () => {
    await post(t.base, '/v1/remember', { entity: 'brand-new', fact: 'exists now' });
    const r = await post(t.base, '/v1/inspect', { entity: 'brand-new' });
    assert.equal(r.status, 200);
    assert.equal(r.body.semantic.length, 1);
  });

  test('accepts the confidence bounds 0 and 1', async () => {
    assert.equal((await post(t.base, '/v1/remember', { entity: 'bounds', fact: 'zero', confidence: 0 })).body.confidence, 0);
    assert.equal((await post(t.base, '/v1/remember', { entity: 'bounds', fact: 'one', confidence: 1 })).body.confidence, 1);
  });

  test('the same fact twice is stored once, keeping the higher confidence', async () => {
    const a = await post(t.base, '/v1/remember', { entity: 'dup', fact: 'Dup owns a red bike', confidence: 0.5 });
    const b = await post(t.base, '/v1/remember', { entity: 'dup', fact: 'dup owns a red bike.', confidence: 0.9 });
    assert.equal(b.body.id, a.body.id);
    assert.equal(b.body.confidence, 0.9);
    const inspect = await post(t.base, '/v1/inspect', { entity: 'dup' });
    assert.equal(inspect.body.semantic.length, 1);
  });
});

describe('recall', () => {
  before(async () => {
    for (let i = 0; i < 8; i++) await post(t.base, '/v1/remember', { entity: 'rc-alice', fact: `Alice visited museum number ${i}` });
    await post(t.base, '/v1/remember', { entity: 'rc-bob', fact: 'Bob visited the museum of modern art' });
  });

  test('defaults to 5 results with the Memory shape and an empty contradictions array', async () => {
    const r = await post(t.base, '/v1/recall', { query: 'museum visited' });
    assert.equal(r.status, 200);
    assert.equal(r.body.memories.length, 5);
    assert.deepEqual(r.body.contradictions, []);
    for (const m of r.body.memories) {
      assert.deepEqual(Object.keys(m).sort(), MEMORY_KEYS);
      assert.equal(typeof m.score, 'number');
    }
    const scores = r.body.memories.map((m: any) => m.score);
    assert.deepEqual(scores, [...scores].sort((a, b) => b - a), 'scores fall with rank');
  });

  test('limit raises the count', async () => {
    const r = await post(t.base, '/v1/recall', { query: 'museum', limit: 20 });
    assert.equal(r.body.memories.length, 9);
  });

  test('entity restricts to that entity', async () => {
    const r = await post(t.base, '/v1/recall', { query: 'museum', entity: 'rc-bob', limit: 20 });
    assert.deepEqual(r.body.memories.map((m: any) => m.content), ['Bob visited the museum of modern art']);
  });

  test('an entity never seen gives an empty result', async () => {
    const r = await post(t.base, '/v1/recall', { query: 'museum', entity: 'nobody-at-all' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.memories, []);
  });

  test('types filters before the limit', async () => {
    const ep = await post(t.base, '/v1/episodes/start', { participants: ['rc-alice'] });
    await post(t.base, `/v1/episodes/${ep.body.episode_id}/message`, { role: 'user', content: 'the museum trip was long' });
    const semantic = await post(t.base, '/v1/recall', { query: 'museum', types: ['semantic'], limit: 3 });
    assert.equal(semantic.body.memories.length, 3);
    assert.ok(semantic.body.memories.every((m: any) => m.memory_type === 'semantic'));
    const episodic = await post(t.base, '/v1/recall', { query: 'museum', types: ['episodic'] });
    assert.deepEqual(episodic.body.memories.map((m: any) => m.content), ['the museum trip was long']);
    const nullTypes = await post(t.base, '/v1/recall', { query: 'museum', types: null, entity: null, limit: 50 });
    assert.equal(nullTypes.body.memories.length, 10);
  });
});

describe('episodes', () => {
  test('start → message → end, with memories_created counting what was stored', async () => {
    const start = await post(t.base, '/v1/episodes/start', { participants: ['ep-carol', 'ep-agent'] });
    assert.equal(start.status, 200);
    assert.match(start.body.episode_id, UUID);
    const id = start.body.episode_id;
    const msg = await post(t.base, `/v1/episodes/${id}/message`, { role: 'user', content: 'I live in Lisbon. I love jazz.' });
    assert.deepEqual([msg.status, msg.body], [200, { status: 'ok' }]);
    // recallable at once, during the conversation
    const during = await post(t.base, '/v1/recall', { query: 'Lisbon', entity: 'ep-carol' });
    assert.equal(during.body.memories[0].memory_type, 'episodic');
    assert.equal(during.body.memories[0].confidence, 1);

    const before = (await get(t.base, '/v1/stats')).body;
    const end = await post(t.base, `/v1/episodes/${id}/end`, { outcome: 'success' });
    assert.equal(end.status, 200);
    const after = (await get(t.base, '/v1/stats')).body;
    const stored = after.semantic_memories + after.procedural_memories - before.semantic_memories - before.procedural_memories;
    assert.ok(end.body.memories_created >= 2);
    assert.equal(end.body.memories_created, stored);
  });

  test('unknown episodes give 404 for message and end', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    assert.equal((await post(t.base, `/v1/episodes/${unknown}/message`, { role: 'user', content: 'hi' })).status, 404);
    assert.equal((await post(t.base, `/v1/episodes/${unknown}/end`, {})).status, 404);
  });

  test('an ended episode takes no more messages and cannot end twice', async () => {
    const { body } = await post(t.base, '/v1/episodes/start', { participants: ['ep-dan'] });
    assert.equal((await post(t.base, `/v1/episodes/${body.episode_id}/end`, { outcome: null })).status, 200);
    assert.equal((await post(t.base, `/v1/episodes/${body.episode_id}/message`, { role: 'user', content: 'late' })).status, 404);
    assert.equal((await post(t.base, `/v1/episodes/${body.episode_id}/end`, {})).status, 404);
  });

  test('compatibility routes take the episode id in the body', async () => {
    const { body } = await post(t.base, '/v1/episodes/start', { participants: ['ep-erin'] });
    const msg = await post(t.base, '/v1/episodes/message', { episode_id: body.episode_id, role: 'user', content: 'I like chess' });
    assert.deepEqual(msg.body, { status: 'ok' });
    const end = await post(t.base, '/v1/episodes/end', { episode_id: body.episode_id });
    assert.equal(end.status, 200);
    assert.equal(end.body.memories_created, 1);
    const unknown = await post(t.base, '/v1/episodes/message', { episode_id: 'nope', role: 'user', content: 'x' });
    assert.equal(unknown.status, 404);
  });
});

describe('recall_grouped', () => {
  test('groups by episode with session fields; semantic facts are single groups with null session', async () => {
    const a = (await post(t.base, '/v1/episodes/start', { participants: ['gr-user'] })).body.episode_id;
    await post(t.base, `/v1/episodes/${a}/message`, { role: 'user', content: 'first talk about kayaks' });
    await post(t.base, `/v1/episodes/${a}/message`, { role: 'assistant', content: 'kayaks need a paddle' });
    const b = (await post(t.base, '/v1/episodes/start', { participants: ['gr-user'] })).body.episode_id;
    await post(t.base, `/v1/episodes/${b}/message`, { role: 'user', content: 'second talk about kayaks kayaks kayaks' });
    await post(t.base, '/v1/remember', { entity: 'gr-user', fact: 'gr-user owns two kayaks' });

    const r = await post(t.base, '/v1/recall_grouped', { query: 'kayaks' });
    assert.equal(r.status, 200);
    const sessions = r.body.groups.map((g: any) => g.session_id);
    assert.deepEqual(sessions.filter((s: any) => s !== null), [a, b], 'chronological: oldest session first');
    const loose = r.body.groups.filter((g: any) => g.session_id === null);
    assert.ok(loose.every((g: any) => g.memories.length === 1), 'episode-less memories are single-memory groups');
    assert.ok(loose.some((g: any) => g.memories[0].content === 'gr-user owns two kayaks'));
    for (const g of r.body.groups) {
      assert.match(g.session_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/);
      assert.equal(typeof g.group_score, 'number');
    }
    const first = r.body.groups.find((g: any) => g.session_id === a);
    assert.deepEqual(first.memories.map((m: any) => m.content), ['first talk about kayaks', 'kayaks need a paddle'],
      'conversation order inside a group');

    const byRelevance = await post(t.base, '/v1/recall_grouped', { query: 'kayaks', order: 'relevance' });
    const scores = byRelevance.body.groups.map((g: any) => g.group_score);
    assert.deepEqual(scores, [...scores].sort((x: number, y: number) => y - x));

    const capped = await post(t.base, '/v1/recall_grouped', { query: 'kayaks', max_groups: 1 });
    assert.equal(capped.body.groups.length, 1);
    const limited = await post(t.base, '/v1/recall_grouped', { query: 'kayaks', limit: 2 });
    assert.equal(limited.body.groups.reduce((n: number, g: any) => n + g.memories.length, 0), 2);
  });
});

describe('inspect, stats, consolidate', () => {
  test('inspect lists by type with null scores and honours limit (default 50)', async () => {
    for (let i = 0; i < 55; i++) await post(t.base, '/v1/remember', { entity: 'insp', fact: `inspect fact ${i}` });
    const r = await post(t.base, '/v1/inspect', { entity: 'insp' });
    assert.equal(r.status, 200);
    assert.equal(r.body.entity, 'insp');
    assert.equal(r.body.semantic.length, 50);
    assert.deepEqual(r.body.episodic, []);
    assert.deepEqual(r.body.procedural, []);
    assert.ok(r.body.semantic.every((m: any) => m.score === null));
    const small = await post(t.base, '/v1/inspect', { entity: 'insp', limit: 3 });
    assert.equal(small.body.semantic.length, 3);
  });

  test('inspect says which episode, and where in it, each episodic memory is', async () => {
    const episodes: string[] = [];
    for (const session of [0, 1]) {
      const { body } = await post(t.base, '/v1/episodes/start', { participants: ['insp-talker'] });
      episodes.push(body.episode_id);
      for (let turn = 0; turn < 3; turn++) await post(t.base, `/v1/episodes/${body.episode_id}/message`, { role: 'user', content: `session ${session} turn ${turn}` });
    }
    await post(t.base, '/v1/remember', { entity: 'insp-talker', fact: 'a plain fact has no episode' });
    const r = await post(t.base, '/v1/inspect', { entity: 'insp-talker' });
    assert.equal(r.status, 200);
    const seen = r.body.episodic.map((m: any) => [m.episode_id, m.seq, m.content]);
    const expected = [0, 1].flatMap((session) => [0, 1, 2].map((turn) => [episodes[session], turn, `session ${session} turn ${turn}`]));
    assert.deepEqual([...seen].sort((a, b) => String(a[2]).localeCompare(String(b[2]))), expected);
    assert.ok(r.body.semantic.every((m: any) => !('episode_id' in m) && !('seq' in m)));
  });

  test('inspect of an unknown entity is 404', async () => {
    const r = await post(t.base, '/v1/inspect', { entity: 'never-seen' });
    assert.equal(r.status, 404);
    assert.equal(typeof r.body.error, 'string');
  });

  test('stats counts the current namespace', async () => {
    const r = await get(t.base, '/v1/stats');
    assert.equal(r.status, 200);
    assert.equal(r.body.namespace, 'default');
    for (const key of ['entities', 'episodic_memories', 'semantic_memories', 'procedural_memories']) {
      assert.ok(Number.isInteger(r.body[key]), key);
    }
    const before = r.body.semantic_memories;
    await post(t.base, '/v1/remember', { entity: 'stats-user', fact: 'one more fact for stats' });
    assert.equal((await get(t.base, '/v1/stats')).body.semantic_memories, before + 1);
  });

  test('consolidate returns the three counts', async () => {
    const r = await post(t.base, '/v1/consolidate');
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), ['archived', 'decayed', 'promoted']);
  });
});

describe('delete', () => {
  test('forgets every memory of the entity and returns the snapshot', async () => {
    const ids = [
      (await post(t.base, '/v1/remember', { entity: 'del-me', fact: 'secret one' })).body.id,
      (await post(t.base, '/v1/remember', { entity: 'del-me', fact: 'secret two' })).body.id,
    ];
    await t.service.backfill.idle();
    const r = await del(t.base, '/v1/entities/del-me');
    assert.equal(r.status, 200);
    assert.equal(r.body.forgotten_count, 2);
    const s = r.body.snapshot;
    assert.match(s.snapshot_id, UUID);
    assert.equal(s.format_version, 1);
    assert.match(s.captured_at, /Z$/);
    assert.equal(s.owner_only, true);
    assert.deepEqual([s.memory_count, s.episodic_count, s.semantic_count], [2, 0, 2]);
    const recall = await post(t.base, '/v1/recall', { query: 'secret one two', limit: 100 });
    assert.ok(recall.body.memories.every((m: any) => !ids.includes(m.id)), 'deleted memories never come back');
    assert.deepEqual((await post(t.base, '/v1/recall', { query: 'secret', entity: 'del-me' })).body.memories, []);
    // The entity went with its memories (issue 25): inspect no longer knows it.
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'del-me' })).status, 404);
  });

  test('omits the snapshot when nothing was deleted; unknown entity is 404', async () => {
    await post(t.base, '/v1/entities', { name: 'empty-ent' });
    const r = await del(t.base, '/v1/entities/empty-ent');
    assert.deepEqual([r.status, r.body], [200, { forgotten_count: 0 }]);
    // Its record goes all the same (nothing to snapshot but a name): a second DELETE finds nothing.
    assert.equal((await del(t.base, '/v1/entities/empty-ent')).status, 404);
    assert.equal((await del(t.base, '/v1/entities/ghost')).status, 404);
  });

  test('names with / ? # % and spaces round-trip as one encoded segment; hard_delete is ignored', async () => {
    const name = 'team/alpha? #1 100% done';
    await post(t.base, '/v1/remember', { entity: name, fact: 'odd name fact' });
    const r = await del(t.base, `/v1/entities/${encodeURIComponent(name)}?hard_delete=true`);
    assert.equal(r.status, 200);
    assert.equal(r.body.forgotten_count, 1);
    assert.equal((await post(t.base, '/v1/inspect', { entity: name })).status, 404);
  });
});
