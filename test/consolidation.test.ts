// Consolidation against a real service: promotion of repeated episodic memories (once),
// FSRS decay of memories left unrecalled, archiving of memories made old, exact counts.
// Rows are made old by back-dating them through a direct connection.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { get, post, startTestService, type TestService } from './support/service.js';
import { withDb } from './support/db.js';
import { DAY_MS, lapsedDifficulty, lapsedStability, retrievability } from '../src/shared/fsrs.js';

let t: TestService;
before(async () => {
  t = await startTestService({ SERVICE_EMBEDDER: 'hash' });
});
after(() => t.close());

const consolidate = async () => {
  const r = await post(t.base, '/v1/consolidate');
  assert.equal(r.status, 200);
  return r.body;
};

async function say(participants: string[], messages: [string, string][], end = true): Promise<string> {
  const id = (await post(t.base, '/v1/episodes/start', { participants })).body.episode_id;
  for (const [role, content] of messages) await post(t.base, `/v1/episodes/${id}/message`, { role, content });
  if (end) await post(t.base, `/v1/episodes/${id}/end`, {});
  return id;
}

/** Moves a memory's last access (and creation) `days` into the past. */
function backdate(content: string, days: number): void {
  withDb(t, (db) => {
    const changed = db.prepare(`UPDATE memories SET last_access_at = last_access_at - @ms, created_at = created_at - @ms
      WHERE content = @content`).run({ ms: days * DAY_MS, content }).changes;
    assert.equal(changed, 1, `one row holds "${content}"`);
  }, { write: true });
}

const row = (content: string) =>
  withDb(t, (db) => db.prepare('SELECT * FROM memories WHERE content = ?').get(content) as Record<string, any>);

describe('promotion', () => {
  test('repeated episodic memories of an entity become one semantic memory, once', async () => {
    const ids = [];
    for (const text of ['I go climbing every Sunday.', 'i go climbing every sunday', 'I go climbing every Sunday!']) {
      ids.push(await say(['co-ann', 'co-bot'], [['user', text], ['assistant', 'Sounds fun!']], false));
    }
    await say(['co-ann', 'co-bot'], [['user', 'I bought new climbing shoes'], ['assistant', 'Sounds fun!']], false);
    await t.service.backfill.idle();

    const before = (await get(t.base, '/v1/stats')).body;
    assert.deepEqual(await consolidate(), { promoted: 1, decayed: 0, archived: 0 });
    const after = (await get(t.base, '/v1/stats')).body;
    assert.equal(after.semantic_memories - before.semantic_memories, 1);
    assert.equal(after.episodic_memories, before.episodic_memories, 'the conversation record stays');

    const semantic = (await post(t.base, '/v1/inspect', { entity: 'co-ann' })).body.semantic;
    assert.deepEqual(semantic.map((m: any) => [m.content, m.confidence]), [['I go climbing every Sunday.', 0.7]]);
    // Provenance: every member points at the new memory. (The agent's repeated "Sounds fun!" is
    // not a fact about co-ann: agent turns are never promoted, hence promoted = 1.)
    const members = withDb(t, (db) => db.prepare(`SELECT content FROM memories
      WHERE promoted_into = (SELECT rowid FROM memories WHERE memory_type = 'semantic' AND content = ?)`)
      .all('I go climbing every Sunday.').map((r: any) => r.content));
    assert.deepEqual(members, ['I go climbing every Sunday.', 'i go climbing every sunday', 'I go climbing every Sunday!']);

    assert.deepEqual(await consolidate(), { promoted: 0, decayed: 0, archived: 0 }, 'a second run promotes nothing new');
    const recall = await post(t.base, '/v1/recall', { query: 'climbing Sunday', entity: 'co-ann', types: ['semantic'] });
    assert.equal(recall.body.memories[0].content, 'I go climbing every Sunday.');
  });

  test('near-duplicates cluster by embedding; the one new repeat does not re-promote', async () => {
    await say(['co-cy'], [['user', 'Usually I drink green tea in the afternoon']], false);
    await say(['co-cy'], [['user', 'I usually drink green tea in the afternoon']], false);
    await say(['co-cy'], [['user', 'I have 2 cats at home']], false);
    await say(['co-cy'], [['user', 'I have 3 cats at home']], false);
    await t.service.backfill.idle();
    assert.deepEqual(await consolidate(), { promoted: 1, decayed: 0, archived: 0 });
    await say(['co-cy'], [['user', 'I usually drink green tea in the afternoon']], false);
    assert.deepEqual(await consolidate(), { promoted: 0, decayed: 0, archived: 0 }, 'one repeat alone is not a cluster');
    const semantic = (await post(t.base, '/v1/inspect', { entity: 'co-cy' })).body.semantic;
    assert.equal(semantic.length, 1);
    assert.match(semantic[0].content, /drink green tea/);
  });
});

describe('decay and archiving', () => {
  test('a memory unrecalled past its stability decays once per interval (FSRS lapse)', async () => {
    const fact = 'Dee collects stamps from Iceland';
    const stored = (await post(t.base, '/v1/remember', { entity: 'co-dee', fact, confidence: 0.8 })).body;
    backdate(fact, 10);
    assert.deepEqual(await consolidate(), { promoted: 0, decayed: 1, archived: 0 });
    const after = row(fact);
    const r = retrievability(stored.stability, 10 * DAY_MS);
    assert.ok(Math.abs(after.stability - lapsedStability(stored.stability, 5, r)) < 0.002);
    assert.ok(after.stability < stored.stability);
    assert.equal(after.difficulty, lapsedDifficulty(5));
    assert.equal(after.archived, 0);
    const inspected = (await post(t.base, '/v1/inspect', { entity: 'co-dee' })).body.semantic[0];
    assert.equal(inspected.stability, after.stability);
    assert.deepEqual(await consolidate(), { promoted: 0, decayed: 0, archived: 0 }, 'the next step waits a stability interval');
  });

  test('a memory made old is archived: kept in the file, gone from recall, inspect and stats', async () => {
    await post(t.base, '/v1/remember', { entity: 'co-eve', fact: 'Eve once owned a yellow submarine' });
    await post(t.base, '/v1/remember', { entity: 'co-eve', fact: 'Eve likes mint tea' });
    const episode = await say(['co-eve'], [['user', 'the yellow submarine leaked badly']], false);
    await t.service.backfill.idle();
    backdate('Eve once owned a yellow submarine', 3650);
    backdate('the yellow submarine leaked badly', 3650);

    const before = (await get(t.base, '/v1/stats')).body;
    assert.deepEqual(await consolidate(), { promoted: 0, decayed: 0, archived: 2 });
    const after = (await get(t.base, '/v1/stats')).body;
    assert.equal(before.semantic_memories - after.semantic_memories, 1);
    assert.equal(before.episodic_memories - after.episodic_memories, 1);

    assert.equal(row('Eve once owned a yellow submarine').archived, 1, 'still in the file');
    const inspect = (await post(t.base, '/v1/inspect', { entity: 'co-eve' })).body;
    assert.deepEqual([...inspect.semantic, ...inspect.episodic].map((m: any) => m.content), ['Eve likes mint tea']);
    const recall = await post(t.base, '/v1/recall', { query: 'yellow submarine', limit: 50 });
    assert.ok(!recall.body.memories.some((m: any) => /submarine/.test(m.content)));
    const scoped = await post(t.base, '/v1/recall', { query: 'yellow submarine', entity: 'co-eve', limit: 50 });
    assert.deepEqual(scoped.body.memories.filter((m: any) => /submarine/.test(m.content)), []);
    const grouped = await post(t.base, '/v1/recall_grouped', { query: 'yellow submarine leaked' });
    assert.ok(!grouped.body.groups.some((g: any) => g.session_id === episode));
    assert.deepEqual(await consolidate(), { promoted: 0, decayed: 0, archived: 0 });
  });

  test('a recalled memory does not decay: recall is an FSRS review that moves its last access', async () => {
    const fact = 'Fay restores old pianos';
    await post(t.base, '/v1/remember', { entity: 'co-fay', fact });
    backdate(fact, 10);
    await post(t.base, '/v1/recall', { query: 'pianos', entity: 'co-fay' });
    // The reinforcement is batched; wait until it has landed (last access back at "now").
    for (let i = 0; i < 100 && Date.now() - row(fact).last_access_at > DAY_MS; i++) await sleep(50);
    assert.deepEqual(await consolidate(), { promoted: 0, decayed: 0, archived: 0 });
  });
});

describe('requests during a pass (SQLite: one node)', () => {
  test('passes asked for at once all answer 200 with their own counts, even with no wait allowed (the PostgreSQL-only bound)', async () => {
    const s = await startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_CONSOLIDATE_WAIT_SECONDS: '0' });
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, () => post(s.base, '/v1/consolidate')));
      assert.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200, 200, 200], JSON.stringify(answers.map((r) => r.body)));
      assert.equal(s.service.consolidator.runs, 6, 'each request ran its own pass, one after another');
    } finally {
      await s.close();
    }
  });
});
