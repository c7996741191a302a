// A recall finds a fact by the one word only it holds, once every fact is embedded, even among
// facts the embedding cannot tell apart ("Shared fact zk2qq from node a" beside 199 others that
// differ in that word alone). The dense signals must not outweigh bm25: with dense feedback's
// weight added on top of the vector's, a fifth of these recalls lost the fact below three
// memories holding none of the query's words (seen first in postgres-two-nodes under load,
// where the backfill had embedded the facts before the recalls ran).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { post, startTestService, type TestService } from './support/service.js';
import { SIGNAL_WEIGHTS } from '../src/workers/recall/engine.js';

const FACTS = 200;
/** A word no other fact holds. */
const marker = (i: number) => `zk${i.toString(36)}q`;

let svc: TestService;
const ids: string[] = [];

before(async () => {
  svc = await startTestService();
  for (let i = 0; i < FACTS; i += 16) {
    const replies = await Promise.all(Array.from({ length: Math.min(16, FACTS - i) }, (_, k) =>
      post(svc.base, '/v1/remember', { entity: `member-${(i + k) % 20}`, fact: `Shared fact ${marker(i + k)} from node ${(i + k) % 2 ? 'b' : 'a'}` })));
    for (const r of replies) {
      assert.equal(r.status, 201, JSON.stringify(r.body));
      ids.push(r.body.id);
    }
  }
  // Every fact embedded: the vector and feedback signals know every candidate.
  await svc.service.backfill.idle();
  assert.equal(svc.service.backfill.embedded, FACTS);
});

after(() => svc?.close());

test('each of 200 near-identical embedded facts is among the top 3 of a recall of its unique word', async () => {
  const missing: number[] = [];
  for (let i = 0; i < FACTS; i++) {
    const r = await post(svc.base, '/v1/recall', { query: marker(i), limit: 3 });
    assert.equal(r.status, 200);
    if (!r.body.memories.some((m: { id: string }) => m.id === ids[i])) missing.push(i);
  }
  assert.deepEqual(missing, []);
});

test('the fact holding the unique word ranks first, its lexical term the largest of its score', async () => {
  const r = await post(svc.base, '/v1/recall', { query: marker(2), limit: 3, explain: true });
  assert.equal(r.body.memories[0].id, ids[2]);
  const terms = Object.fromEntries(r.body.memories[0].explanation.signals.map((s: { signal: string; contribution: number }) => [s.signal, s.contribution]));
  assert.ok(terms.lexical > terms.vector + terms.feedback, JSON.stringify(terms));
});

test('bm25 outweighs the dense terms and the tie-break together (what the recalls above rely on)', () => {
  assert.ok(SIGNAL_WEIGHTS.bm25 > SIGNAL_WEIGHTS.vector + SIGNAL_WEIGHTS.feedback + SIGNAL_WEIGHTS.strength);
});
