// Fair background work (issue 25): tenant A writes 50,000 memories while tenant B writes 10. The
// embedding backfill takes namespaces in turn, a batch each, so B's 10 get their vectors while
// A's backlog is still being worked through — found by the vector signal of a recall — instead
// of after A's whole backlog: when B's backlog is empty, A's is not.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestService, type TestService } from './support/service.js';

const A_MEMORIES = 50_000;
const B_MEMORIES = 10;
const CLIENTS = 256;
/** The bound for B's memories to be recallable by vector once written. */
const B_BOUND_MS = 5_000;

let t: TestService;
before(async () => {
  t = await startTestService({ SERVICE_API_KEYS: 'key-a=tenant-a,key-b=tenant-b', SERVICE_API_KEYS_BINDINGS: 'true', SERVICE_RATE_LIMIT: '0', SERVICE_EMBEDDER: 'hash' });
});
after(() => t?.close());

const vectorRank = (memory: any): number | null =>
  (memory.explanation?.signals ?? []).find((s: { signal: string }) => s.signal === 'vector')?.rank ?? null;

test(`B's ${B_MEMORIES} memories are recallable by vector while A's ${A_MEMORIES.toLocaleString('en')} wait their turns`, async () => {
  // A's writes go to the service's writer directly, as the remember route hands them over (and
  // poking the backfill as it does): 50,000 HTTP round trips would make the test minutes long on
  // a loaded CI box without changing what the backfill sees. B's go through HTTP.
  let next = 0;
  const writer = async () => {
    while (next < A_MEMORIES) {
      const i = next++;
      await t.service.writer.send('tenant-a', { type: 'remember', entity: `a-user-${i % 500}`, fact: `tenant a note number ${i} about shipment ${i * 7}`, confidence: 0.8 });
      t.service.backfill.poke('tenant-a');
    }
  };
  const writers = Array.from({ length: CLIENTS }, writer);
  // B writes while A is well under way.
  while (next < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
  const facts = Array.from({ length: B_MEMORIES }, (_, i) => `Bea's violin number ${i} was tuned by a luthier in Cremona`);
  for (const fact of facts) assert.equal((await call(t.base, 'POST', '/v1/remember', { entity: 'bea', fact }, { authorization: 'Bearer key-b' })).status, 201);
  const writtenAt = performance.now();

  // Bounded poll: B's backlog empties while A's is still long.
  const backlog = async (namespace: string) => (await t.service.pool.run({ op: 'embeddingBacklog', namespace })).count;
  let bLeft = B_MEMORIES;
  while ((bLeft = await backlog('tenant-b')) > 0 && performance.now() - writtenAt < B_BOUND_MS) await new Promise((resolve) => setTimeout(resolve, 50));
  const aLeft = await backlog('tenant-a');
  assert.equal(bLeft, 0, `tenant-b still had ${bLeft} memories without a vector ${B_BOUND_MS} ms after writing them`);
  assert.ok(aLeft > 0 && next < A_MEMORIES, `tenant-a's backlog (${aLeft}, ${next} written) was not still waiting when tenant-b's was done`);

  // Each of B's facts is found by the vector signal.
  for (const fact of facts.slice(0, 3)) {
    const r = await call(t.base, 'POST', '/v1/recall', { query: fact, limit: 3, explain: true }, { authorization: 'Bearer key-b' });
    const hit = r.body.memories.find((m: { content: string }) => m.content === fact);
    assert.ok(hit, `${fact} recalled`);
    assert.ok(vectorRank(hit) !== null, `${fact} found by the vector signal: ${JSON.stringify(hit)}`);
  }
  await Promise.all(writers);
});
