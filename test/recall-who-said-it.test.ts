// Who said it (who-said-it.ts): memories by or about a person the question names gain, in
// proportion to how few of the candidates are. On small hand-made inputs, and wired into the
// engine over turns written through the service (each assertion fails without the stage); the
// same questions asked again and in reverse order give the same top 10 and scores.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { RecallEngine, SIGNAL_WEIGHTS } from '../src/workers/recall/engine.js';
import { whoSaidIt } from '../src/workers/recall/who-said-it.js';
import { post, startTestService, type TestService } from './support/service.js';

describe('who said it', () => {
  test('a memory by or about a named person gains weight × the share of candidates that are not', () => {
    const bonus = whoSaidIt([1, 2, 3, 4], new Set([2]), 0.4);
    assert.equal(bonus.get(2), 0.4 * (1 - 1 / 4));
    assert.equal(bonus.get(1), undefined);
    assert.equal(bonus.size, 1);
  });

  test('when every candidate is by or about them, or the weight is 0, nothing is added', () => {
    assert.equal(whoSaidIt([1, 2], new Set([1, 2]), 0.4).size, 0);
    assert.equal(whoSaidIt([1, 2], new Set([1]), 0).size, 0);
    assert.equal(whoSaidIt([1, 2], new Set(), 0.4).size, 0);
  });
});

describe('through the engine, on turns written through the service', () => {
  let t: TestService;
  let db: Db;
  const contents = new Map<string, string>();

  before(async () => {
    t = await startTestService();
    const ep = (await post(t.base, '/v1/episodes/start', { participants: ['Ann', 'Bob'] })).body.episode_id;
    for (const line of ['Bob: hiking, hiking, always hiking!', 'Bob: Lovely weather today.', 'Bob: Did you eat yet?',
      'Ann: Once I went hiking up to the lake above the old quarry.', 'Bob: The game was on last night.', 'Bob: I have to call my sister.',
      'Bob: We paint, paint and paint again.', 'Bob: I paint murals.', 'Ann: I painted a small boat on canvas for a friend.', 'Bob: See you soon.',
      'Bob: Where should we go tonight?', 'Bob: I go to the gym on Mondays.', 'Bob: Time to go home.', 'Bob: Shall we go by bus?',
      'Bob: I would go again.', 'Bob: We can go later.']) {
      await post(t.base, `/v1/episodes/${ep}/message`, { role: 'user', content: line });
    }
    await t.service.backfill.idle();
    db = openDatabase(join(t.dir, 'memory.db'), { readonly: true });
    for (const row of db.prepare('SELECT id, content FROM memories').all() as { id: string; content: string }[]) contents.set(row.id, row.content);
  });
  after(async () => {
    db?.close();
    await t?.close();
  });

  const ranked = async (weights: Record<string, number>, query: string) => {
    const ns = db.prepare("SELECT id FROM namespaces WHERE name = 'default'").pluck().get() as number;
    const engine = new RecallEngine(new SqliteReadPort(db, ns, 'default', { minSimilarity: 0.2 }), { weights });
    return (await engine.recall({ query, entity: null, types: ['episodic'], limit: 10, queryVector: null })).map((h) => contents.get(h.row.id)!);
  };

  test('who said it: what the named person said comes before the other speaker\'s stronger match', async () => {
    const anns = 'Ann: Once I went hiking up to the lake above the old quarry.';
    const bobs = 'Bob: hiking, hiking, always hiking!';
    const without = await ranked({ said: 0, adjacent: 0, session: 0 }, 'where did Ann go hiking');
    assert.ok(without.indexOf(bobs) < without.indexOf(anns), 'the fixture: without the stage the other speaker\'s turn ranks first');
    const withStage = await ranked({ said: SIGNAL_WEIGHTS.said, adjacent: 0, session: 0 }, 'where did Ann go hiking');
    assert.ok(withStage.indexOf(anns) < withStage.indexOf(bobs));
  });

  test('through HTTP the stage counts in explain, and repeating or reversing the questions changes no top 10 and no score', async () => {
    const questions = ['where did Ann go hiking', 'what does Bob paint', 'Bob weather', 'Bob gym Mondays', 'what did Ann paint'];
    const ask = async (query: string) => (await post(t.base, '/v1/recall', { query, limit: 10, types: ['episodic'], explain: true })).body.memories;
    const memories = await ask('where did Ann go hiking');
    const entity = (m: { explanation: { signals: { signal: string; contribution: number }[] } }) => m.explanation.signals.find((s) => s.signal === 'entity')!.contribution;
    assert.ok(memories.some((m: never) => entity(m) > 0), 'who said it contributes: this test would prove nothing otherwise');
    for (const m of memories) {
      const sum = m.explanation.signals.reduce((a: number, s: { contribution: number }) => a + s.contribution, 0);
      assert.ok(Math.abs(sum - m.score) < 1e-5, 'the contributions add up to the score');
    }
    const top = async (query: string) => (await ask(query)).map((m: { id: string; score: number }) => `${m.id} ${m.score}`);
    const first = new Map<string, string[]>();
    for (const q of questions) first.set(q, await top(q));
    for (const q of questions) assert.deepEqual(await top(q), first.get(q), `repeated: ${q}`);
    for (const q of [...questions].reverse()) assert.deepEqual(await top(q), first.get(q), `reversed: ${q}`);
  });
});
