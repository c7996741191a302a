// The shared vector codes when one pool thread runs several recalls at once: with an endpoint
// embedder (`openai`, through the local stand-in) a thread takes up to 4 recalls, each waiting on
// its query's embedding. The store a recall was lent travels in that recall's own context, so
// while the namespace's store is replaced between them each recall scans the store it was lent,
// and no thread scans (so keeps alive) a store the registry no longer counts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, post, startTestService, type TestService } from './support/service.js';
import { FakeLlm } from './support/fake-llm.js';
import { scansServed, type SharedCodesHandle } from '../src/workers/ivf/vector-codes.js';

const NAMESPACE = 'default';
const KEPT = 160;
/** Two entities of 30 memories each: deleting one leaves more than a tenth of the store dead, so the next refresh builds a new store. */
const DOOMED = ['doomed-one', 'doomed-two'];
const PER_DOOMED = 30;

let fake: FakeLlm;
let t: TestService;

/** Waits until `ready` holds; fails if `settled` (the recall that should be waiting) answers first. */
async function until(ready: () => boolean, settled: Promise<unknown>): Promise<void> {
  let answered = false;
  void settled.then(() => { answered = true; }, () => { answered = true; });
  while (!ready()) {
    assert.ok(!answered, 'the recall answered before its embedding was held');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

before(async () => {
  fake = await FakeLlm.start();
  t = await startTestService({
    SERVICE_EMBEDDER: 'openai', SERVICE_EMBEDDINGS_URL: fake.url, SERVICE_EMBEDDINGS_MODEL: 'fake-embed',
    SERVICE_EMBEDDINGS_API_KEY: 'emb-key', SERVICE_EMBEDDING_DIMENSIONS: '32',
    // One interactive thread: every recall of the test runs on it (4 at once with an endpoint embedder).
    SERVICE_POOL_THREADS: '1',
    SERVICE_VECTOR_INDEX_MIN: '64',
    SERVICE_VECTOR_CODES_MB: '64',
  });
  for (let i = 0; i < KEPT; i++) assert.equal((await post(t.base, '/v1/remember', { entity: 'garden', fact: `garden note ${i} about hedge number ${i * 7}` })).status, 201);
  for (const entity of DOOMED) {
    for (let i = 0; i < PER_DOOMED; i++) await post(t.base, '/v1/remember', { entity, fact: `${entity} passing note ${i}` });
  }
  await t.service.backfill.idle();
  await t.service.vectorIndexer.flush();
  await t.service.pool.vectorCodes.refresh(NAMESPACE);
});
after(async () => {
  await t?.close();
  await fake?.close();
});

/** Deletes an entity's memories and refreshes the codes: the store is built again without them. */
async function replaceStore(entity: string): Promise<SharedCodesHandle> {
  const codes = t.service.pool.vectorCodes;
  const before = codes.peek(NAMESPACE)!;
  assert.equal((await call(t.base, 'DELETE', `/v1/entities/${entity}`)).status, 200);
  await codes.refresh(NAMESPACE);
  await codes.settled();
  const now = codes.peek(NAMESPACE);
  assert.ok(now && now.id !== before.id, 'the refresh built a new store');
  return now;
}

/** Sends a recall whose query embedding the endpoint holds, and waits until the pool thread is waiting for it. */
async function heldRecall(query: string): Promise<{ reply: Promise<{ status: number; body: any }> }> {
  const reply = post(t.base, '/v1/recall', { query, limit: 3 });
  await until(() => fake.embeddingsHeld.includes(query), reply);
  return { reply }; // wrapped: an async function returning the promise itself would wait for it
}

// A deadline: a recall that never reaches the endpoint would otherwise hold the suite (no runner timeout is set).
test('recalls running at once on one thread each scan the store they were lent while it is replaced, and the budget counts every store scanned', { timeout: 120_000 }, async () => {
  const codes = t.service.pool.vectorCodes;
  const first = codes.peek(NAMESPACE);
  assert.ok(first, 'the indexed namespace has a store');
  assert.equal(codes.namespaces, 1);
  const queryA = 'garden note 11 about hedge number 77';
  const queryB = 'garden note 23 about hedge number 161';
  fake.holdEmbeddingsOf = /^garden note/;

  // A is lent the first store and waits for its embedding; the store is replaced meanwhile.
  const recallA = (await heldRecall(queryA)).reply;
  const second = await replaceStore(DOOMED[0]);
  // B is lent the second store, on the same thread, while A still waits.
  const recallB = (await heldRecall(queryB)).reply;
  fake.releaseEmbeddings(/hedge number 161$/);
  const b = await recallB;
  assert.equal(b.status, 200);
  assert.equal(b.body.memories[0].content, queryB);
  assert.equal(scansServed(second), 1, 'B scanned the store it was lent');
  assert.equal(scansServed(first), 0);

  // B has settled: its store is replaced while no recall is lent it, so it leaves the budget at
  // once; the first stays counted while A, lent it, runs.
  const third = await replaceStore(DOOMED[1]);
  const whileALent = codes.bytes;

  fake.releaseEmbeddings(/hedge number 77$/);
  const a = await recallA;
  assert.equal(a.status, 200);
  assert.equal(a.body.memories[0].content, queryA);
  assert.equal(scansServed(first), 1, 'A scanned the store it was lent (counted in the budget until A settled)');
  assert.equal(scansServed(second), 1, 'no recall scanned the second store after it left the budget');
  assert.equal(scansServed(third), 0);
  assert.ok(codes.bytes < whileALent, 'the first store left the budget when A settled');
  assert.ok(codes.peakBytes <= codes.limitBytes);

  // Settled: only the store held now is counted, and a recall scans it.
  fake.holdEmbeddingsOf = null;
  const held = codes.bytes;
  assert.equal((await post(t.base, '/v1/recall', { query: 'garden note 40 about hedge number 280', limit: 3 })).status, 200);
  assert.equal(scansServed(third), 1);
  assert.equal(codes.bytes, held);
});
