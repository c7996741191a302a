// The embedding backfill's retry back-off stands: with the embedder down, writes arriving while a
// retry waits do not start failing runs early (each would fail again and log a warning).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { post, startTestService } from './support/service.js';
import { FakeLlm } from './support/fake-llm.js';
import { RETRY_MS } from '../src/core/jobs/embedding-backfill.js';

test('writes during the retry back-off mark work pending instead of starting runs', async () => {
  const fake = await FakeLlm.start();
  // Every text refused (400): a run fails at once, without the SDK's retries of a 5xx.
  fake.rejectEmbeddingOf = /while down/;
  const t = await startTestService({
    SERVICE_EMBEDDER: 'openai', SERVICE_EMBEDDINGS_URL: fake.url, SERVICE_EMBEDDINGS_MODEL: 'fake-embed',
    SERVICE_EMBEDDINGS_API_KEY: 'emb-key', SERVICE_EMBEDDING_DIMENSIONS: '32',
  });
  const attempts = () => fake.requests.filter((r) => r.path.endsWith('/embeddings')).length;
  try {
    assert.equal((await post(t.base, '/v1/remember', { entity: 'down', fact: 'first fact while down' })).status, 201);
    // The first run fails: the batch, then the row alone, are refused.
    while (attempts() < 2) await sleep(10);
    await sleep(100);
    for (let i = 0; i < 20; i++) {
      assert.equal((await post(t.base, '/v1/remember', { entity: 'down', fact: `later fact ${i} while down` })).status, 201);
    }
    await sleep(100);
    // The retry was scheduled when the service saw the second refusal, after the fake recorded it:
    // a later fact's run may come once RETRY_MS has passed since then (on a loaded machine the 20
    // writes can take that long), never before.
    const failedAt = fake.requests.filter((r) => r.path.endsWith('/embeddings'))[1]!.at;
    const early = fake.requests.filter((r) =>
      JSON.stringify(r.body?.input ?? '').includes('later fact') && r.at < failedAt + RETRY_MS);
    assert.equal(early.length, 0, 'no run started before the retry delay');
  } finally {
    await t.close();
    await fake.close();
  }
});
