// The query embedding cache: a repeated query reuses its vector (same answer, counted as a
// hit in /metrics), the cache stays within its byte bound, and SERVICE_QUERY_CACHE_BYTES=0
// turns it off. Real service, real pool threads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QueryEmbeddingCache } from '../src/core/query-embedding-cache.js';
import { loadConfig } from '../src/shared/config.js';
import { parseSamples, sample } from './support/prometheus.js';
import { post, startTestService } from './support/service.js';

const HITS = 'memory_runtime_query_embedding_cache_hits_total';
const MISSES = 'memory_runtime_query_embedding_cache_misses_total';

async function cacheCounts(base: string): Promise<{ hits: number; misses: number; bytes: number }> {
  const samples = parseSamples(await (await fetch(`${base}/metrics`)).text());
  return { hits: sample(samples, HITS), misses: sample(samples, MISSES), bytes: sample(samples, 'memory_runtime_query_embedding_cache_bytes') };
}

test('a repeated query is answered from the cached embedding, with the same result, and counted as a hit', async () => {
  const t = await startTestService({ SERVICE_EMBEDDER: 'hash' });
  try {
    for (const fact of ['Mia drinks green tea', 'Mia lives in Lisbon', 'Omar plays chess']) await post(t.base, '/v1/remember', { entity: 'mia', fact });
    await t.service.backfill.idle();
    const first = await post(t.base, '/v1/recall', { query: 'what does Mia drink', limit: 3 });
    assert.deepEqual(await cacheCounts(t.base).then(({ hits, misses }) => ({ hits, misses })), { hits: 0, misses: 1 });
    const again = await post(t.base, '/v1/recall', { query: 'what does Mia drink', limit: 3 });
    const grouped = await post(t.base, '/v1/recall_grouped', { query: 'what does Mia drink' });
    assert.equal(again.status, 200);
    assert.equal(grouped.status, 200);
    assert.deepEqual(again.body.memories.map((m: { id: string }) => m.id), first.body.memories.map((m: { id: string }) => m.id));
    assert.deepEqual(again.body.memories.map((m: { score: number }) => m.score), first.body.memories.map((m: { score: number }) => m.score));
    const counts = await cacheCounts(t.base);
    assert.equal(counts.hits, 2);
    assert.equal(counts.misses, 1);
    assert.ok(counts.bytes > 0);
  } finally {
    await t.close();
  }
});

test('SERVICE_QUERY_CACHE_BYTES=0 disables the cache: every recall embeds its query', async () => {
  const t = await startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_QUERY_CACHE_BYTES: '0' });
  try {
    await post(t.base, '/v1/remember', { entity: 'mia', fact: 'Mia drinks green tea' });
    for (let i = 0; i < 2; i++) assert.equal((await post(t.base, '/v1/recall', { query: 'green tea' })).status, 200);
    assert.deepEqual(await cacheCounts(t.base), { hits: 0, misses: 0, bytes: 0 });
  } finally {
    await t.close();
  }
});

test('the cache holds at most its byte bound, dropping the least recently used first', () => {
  const vector = () => new Float32Array(256);
  const cache = new QueryEmbeddingCache('hash-256', 4 * 1200);
  for (let i = 0; i < 50; i++) cache.set('default', `query ${i}`, vector());
  assert.ok(cache.bytes <= 4 * 1200);
  assert.equal(cache.get('default', 'query 0'), undefined);
  assert.ok(cache.get('default', 'query 49'));
});

test('SERVICE_QUERY_CACHE_BYTES must be a whole number of bytes, 0 or more', () => {
  assert.throws(() => loadConfig({ SERVICE_PATH: '/tmp/x.db', SERVICE_QUERY_CACHE_BYTES: '-1' }), /SERVICE_QUERY_CACHE_BYTES/);
  assert.equal(loadConfig({ SERVICE_PATH: '/tmp/x.db', SERVICE_QUERY_CACHE_BYTES: '0' }).queryCacheBytes, 0);
});

test("a namespace's cached query embedding is not another namespace's hit (a hit's speed would tell one tenant another's question)", () => {
  const cache = new QueryEmbeddingCache('hash-256', 1 << 20);
  cache.set('tenant-b', 'is maria pregnant', new Float32Array(256));
  assert.equal(cache.get('tenant-a', 'is maria pregnant'), undefined);
  assert.ok(cache.get('tenant-b', 'is maria pregnant'));
});
