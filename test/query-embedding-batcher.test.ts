// Queries of concurrent recalls embedded together: the batcher's scheduling (a lone query goes
// at once, queries arriving during a model call go together in the next, failures leave the
// recall to embed its own), that USE-lite gives a query the same vector in a batch as alone,
// and recall through a real service whose queries are batched.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { QueryEmbeddingBatcher } from '../src/core/query-embedding-batcher.js';
import { UseLiteEmbedder } from '../src/workers/embedding/use-lite.js';
import { post, startTestService, type TestService } from './support/service.js';

/** A model call that ends when the test says, recording each batch it was given. */
function heldCalls() {
  const batches: string[][] = [];
  const release: (() => void)[] = [];
  const embed = (texts: string[]) => {
    batches.push(texts);
    return new Promise<(Float32Array | null)[]>((resolve) => {
      release.push(() => resolve(texts.map((text) => Float32Array.of(text.length))));
    });
  };
  return { batches, release, embed };
}

describe('query embedding batcher', () => {
  test('a lone query is embedded at once; queries arriving during a call go together in the next', async () => {
    const calls = heldCalls();
    const batcher = new QueryEmbeddingBatcher(calls.embed, 1);
    const first = batcher.embed('a');
    assert.deepEqual(calls.batches, [['a']]);
    const waiting = ['bb', 'ccc', 'dddd'].map((text) => batcher.embed(text));
    assert.equal(calls.batches.length, 1, 'no second call while the first runs');
    calls.release[0]();
    assert.deepEqual(await first, Float32Array.of(1));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(calls.batches[1], ['bb', 'ccc', 'dddd']);
    calls.release[1]();
    assert.deepEqual(await Promise.all(waiting), [Float32Array.of(2), Float32Array.of(3), Float32Array.of(4)]);
    assert.equal(batcher.calls, 2);
    assert.equal(batcher.texts, 4);
  });

  test('batches are capped, and several calls run at once up to the limit', async () => {
    const calls = heldCalls();
    const batcher = new QueryEmbeddingBatcher(calls.embed, 2, 3);
    const all = Array.from({ length: 8 }, (_, i) => batcher.embed(`q${i}`));
    assert.deepEqual(calls.batches, [['q0'], ['q1']], 'two calls at once, each started by the first query to find room');
    calls.release[0]();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(calls.batches[2], ['q2', 'q3', 'q4']);
    calls.release[1]();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(calls.batches[3], ['q5', 'q6', 'q7']);
    calls.release[2]();
    calls.release[3]();
    assert.equal((await Promise.all(all)).length, 8);
  });

  test('a failed call or a text the model refused answers undefined, and later calls still run', async () => {
    let fail = true;
    const batcher = new QueryEmbeddingBatcher(async (texts) => {
      if (fail) throw new Error('model failed');
      return texts.map((text) => (text === 'refused' ? null : Float32Array.of(1)));
    }, 1);
    assert.equal(await batcher.embed('x'), undefined);
    fail = false;
    assert.deepEqual(await Promise.all([batcher.embed('ok'), batcher.embed('refused')]), [Float32Array.of(1), undefined]);
  });
});

describe('USE-lite in batches', () => {
  test('a query gets the same vector in a batch as alone', async () => {
    const use = await UseLiteEmbedder.load();
    const queries = ['where does Alice live', 'tea', 'what did Bob and Carol talk about during the long meeting on kubernetes migrations last week', 'is Dana allergic to anything?'];
    const batch = await use.embed(queries);
    for (let i = 0; i < queries.length; i++) {
      const [alone] = await use.embed([queries[i]]);
      let dot = 0;
      for (let d = 0; d < alone.length; d++) dot += alone[d] * batch[i][d];
      assert.ok(dot > 0.99999, `"${queries[i]}": cosine ${dot} between its batched and lone vectors`);
    }
  });
});

describe('recall with batched query embeddings (USE-lite service)', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ SERVICE_EMBEDDER: 'use', SERVICE_POOL_THREADS: '1' });
  });
  after(() => service.close());

  test('concurrent recalls share model calls and are each answered with their own best memory', async () => {
    const facts = ['Alice lives in Lisbon', 'Bob is allergic to peanuts', 'Carol plays the violin', 'Dana works with Kubernetes every day'];
    for (const fact of facts) assert.equal((await post(service.base, '/v1/remember', { entity: fact.split(' ')[0], fact })).status, 201);
    await service.service.backfill.idle();
    const batcher = service.service.operations.queryBatcher;
    assert.ok(batcher, 'the USE-lite service batches query embeddings');
    const before = { calls: batcher.calls, texts: batcher.texts };
    const questions: [string, string][] = [
      ['which city is Alice based in', facts[0]], ['what food allergy does Bob have', facts[1]],
      ['what instrument does Carol play', facts[2]], ['who uses kubernetes at work', facts[3]],
      ['where is Alice living now', facts[0]], ['Bob and peanuts', facts[1]],
    ];
    const answers = await Promise.all(questions.map(async ([query]) => {
      const response = await post(service.base, '/v1/recall', { query, limit: 1 });
      assert.equal(response.status, 200);
      return (response.body as { memories: { content: string }[] }).memories[0]?.content;
    }));
    assert.deepEqual(answers, questions.map(([, fact]) => fact));
    assert.equal(batcher.texts - before.texts, questions.length, 'every query went through the batcher');
    assert.ok(batcher.calls - before.calls < questions.length, `${batcher.calls - before.calls} model calls for ${questions.length} concurrent queries`);
  });
});
