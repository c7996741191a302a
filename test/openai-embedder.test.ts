// The opt-in OpenAI-compatible embedder, through the real `openai` SDK against the local
// stand-in endpoint: vectors land, queries are embedded once, and an endpoint that is down
// degrades recall to the other signals instead of failing it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { post, startTestService, type TestService } from './support/service.js';
import { FakeLlm } from './support/fake-llm.js';

let fake: FakeLlm;
let t: TestService;
before(async () => {
  fake = await FakeLlm.start();
  t = await startTestService({
    SERVICE_EMBEDDER: 'openai', SERVICE_EMBEDDINGS_URL: fake.url, SERVICE_EMBEDDINGS_MODEL: 'fake-embed',
    SERVICE_EMBEDDINGS_API_KEY: 'emb-key', SERVICE_EMBEDDING_DIMENSIONS: '32',
  });
});
after(async () => {
  await t.close();
  await fake.close();
});

const embeddingRequests = () => fake.requests.filter((r) => r.path.endsWith('/embeddings'));

test('stored memories get vectors from the endpoint, in batches, with the configured model and key', async () => {
  for (let i = 0; i < 5; i++) await post(t.base, '/v1/remember', { entity: 'oa', fact: `openai embedded fact ${i}` });
  await t.service.backfill.idle();
  const requests = embeddingRequests();
  assert.ok(requests.length >= 1 && requests.length <= 5);
  assert.equal(requests[0].body.model, 'fake-embed');
  assert.equal(requests[0].body.encoding_format, 'float');
  assert.equal(requests[0].headers.authorization, 'Bearer emb-key');
  const db = openDatabase(join(t.dir, 'memory.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT embedding FROM memory_vectors').all() as { embedding: Buffer }[];
    assert.equal(rows.length, 5);
    assert.ok(rows.every((r) => r.embedding.byteLength === 32 * 4));
    const meta = db.prepare("SELECT value FROM meta WHERE key = 'embedder'").get() as { value: string };
    assert.equal(meta.value, 'openai:fake-embed');
  } finally {
    db.close();
  }
});

test('a recall embeds its query exactly once', async () => {
  const before = embeddingRequests().length;
  const r = await post(t.base, '/v1/recall', { query: 'openai embedded fact 3', limit: 3 });
  assert.equal(r.body.memories[0].content, 'openai embedded fact 3');
  const made = embeddingRequests().slice(before);
  assert.equal(made.length, 1);
  assert.deepEqual(made[0].body.input, ['openai embedded fact 3']);
});

test('with the endpoint down, writes still land and recall still answers from the other signals', async () => {
  fake.embeddingsUp = false;
  try {
    const stored = await post(t.base, '/v1/remember', { entity: 'oa', fact: 'written while embeddings are down' });
    assert.equal(stored.status, 201);
    const r = await post(t.base, '/v1/recall', { query: 'written while embeddings are down' });
    assert.equal(r.status, 200);
    assert.equal(r.body.memories[0].content, 'written while embeddings are down');
  } finally {
    fake.embeddingsUp = true;
  }
});

test('a text the embedder rejects is set aside; the rest of its batch and later rows still get vectors', async () => {
  fake.rejectEmbeddingOf = /POISON/;
  try {
    for (const fact of ['before the poison', 'POISON over the model limit', 'after the poison']) {
      await post(t.base, '/v1/remember', { entity: 'oa-poison', fact });
    }
    await t.service.backfill.idle();
    const db = openDatabase(join(t.dir, 'memory.db'), { readonly: true });
    try {
      const states = Object.fromEntries((db.prepare("SELECT content, embedded FROM memories WHERE content LIKE '%poison%' COLLATE NOCASE").all() as { content: string; embedded: number }[])
        .map((r) => [r.content, r.embedded]));
      assert.deepEqual(states, { 'before the poison': 1, 'POISON over the model limit': -1, 'after the poison': 1 });
    } finally {
      db.close();
    }
    const r = await post(t.base, '/v1/recall', { query: 'POISON over the model limit', entity: 'oa-poison' });
    assert.equal(r.body.memories[0].content, 'POISON over the model limit', 'still recallable by BM25');
  } finally {
    fake.rejectEmbeddingOf = null;
  }
});
