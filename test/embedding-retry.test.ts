// The embedding backfill's retry back-off stands: with the embedder down, writes made while a run
// is failing, or while its retry waits, do not start runs before the back-off ends (each would
// fail again and log a warning; with writes streaming in, there would be no back-off at all).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { post, startTestService } from './support/service.js';
import { FakeLlm } from './support/fake-llm.js';
import { RETRY_MS } from '../src/core/jobs/embedding-backfill.js';

test('writes made while a run fails or its retry waits start no run before the back-off ends; the retry embeds them all', async () => {
  const fake = await FakeLlm.start();
  // Every text refused (400): a run fails at once, without the SDK's retries of a 5xx.
  fake.rejectEmbeddingOf = /while down/;
  // The first run's request waits until the writes below were made, so they arrive while that run
  // is in flight: on a loaded machine they may anyway, before the service hears of the refusal.
  fake.holdEmbeddingsOf = /first fact/;
  const t = await startTestService({
    SERVICE_EMBEDDER: 'openai', SERVICE_EMBEDDINGS_URL: fake.url, SERVICE_EMBEDDINGS_MODEL: 'fake-embed',
    SERVICE_EMBEDDINGS_API_KEY: 'emb-key', SERVICE_EMBEDDING_DIMENSIONS: '32',
  });
  const embeddingRequests = () => fake.requests.filter((r) => r.path.endsWith('/embeddings'));
  const remember = async (fact: string) => assert.equal((await post(t.base, '/v1/remember', { entity: 'down', fact })).status, 201);
  try {
    await remember('first fact while down');
    while (!fake.embeddingsHeld.some((input) => input.includes('first fact'))) await sleep(10);
    const facts = ['first fact while down'];
    for (let i = 0; i < 10; i++) facts.push(`fact ${i} during the run, while down`);
    for (const fact of facts.slice(1)) await remember(fact);
    fake.holdEmbeddingsOf = null;
    fake.releaseEmbeddings(/first fact/);
    // The first run fails: the batch, then the row alone, are refused.
    while (embeddingRequests().length < 2) await sleep(10);
    for (let i = 0; i < 10; i++) facts.push(`fact ${i} during the back-off, while down`);
    for (const fact of facts.slice(11)) await remember(fact);
    fake.rejectEmbeddingOf = null; // the endpoint is back: the next run succeeds, whenever it starts

    // The retry was scheduled when the service heard of the second refusal, after the fake recorded
    // it: the next request may come once RETRY_MS has passed since then, never before.
    const failedAt = embeddingRequests()[1]!.at;
    while (embeddingRequests().length < 3) await sleep(20);
    const next = embeddingRequests()[2]!;
    assert.ok(next.at >= failedAt + RETRY_MS, `the next run started ${(next.at - failedAt).toFixed(0)} ms after the refusal, inside the ${RETRY_MS} ms back-off`);
    // It reads the whole backlog: the writes that found the back-off waiting are not lost.
    assert.deepEqual([...next.body.input].sort(), [...facts].sort());
  } finally {
    await t.close();
    await fake.close();
  }
});
