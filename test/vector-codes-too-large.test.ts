// An indexed namespace whose shared vector codes alone need more than SERVICE_VECTOR_CODES_MB: the
// service says so in /metrics (vector_codes_too_large_namespaces), so an operator (and bench:scale,
// which stops waiting for codes that cannot come) can tell "not built yet" from "will not fit".
// A real service on a real file; the codes build is the real background task.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, rememberMany, startTestService } from './support/service.js';

const gauge = (text: string, name: string) => Number(new RegExp(`^memory_runtime_${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

test('a namespace whose codes need more than the budget is reported too large, and recall still answers (vec0)', async () => {
  // 1024-d: a store holds at least 1,024 vectors' room (~1.1 MiB), over a 1 MiB budget however few there are.
  const t = await startTestService({
    SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '1024', SERVICE_VECTOR_INDEX_MIN: '64', SERVICE_VECTOR_CODES_MB: '1',
  });
  try {
    const codes = t.service.pool.vectorCodes;
    if (!codes.enabled) return; // PostgreSQL: no shared codes there
    await rememberMany(t.base, 'drawers', 120, 'a spare key');
    await t.service.backfill.idle();
    await t.service.vectorIndexer.flush();
    await codes.settled();
    assert.ok(codes.refreshes > 0, 'the upkeep asked for the codes');
    const text = (await call(t.base, 'GET', '/metrics')).body as string;
    assert.equal(gauge(text, 'vector_codes_too_large_namespaces'), 1);
    assert.equal(gauge(text, 'vector_codes_namespaces'), 0);
    assert.equal(gauge(text, 'vector_codes_limit_bytes'), 2 ** 20);
    const recall = await call(t.base, 'POST', '/v1/recall', { query: 'which drawer is the spare key number 7 in', limit: 3 });
    assert.equal(recall.status, 200);
    assert.ok(recall.body.memories.length > 0);
  } finally {
    await t.close();
  }
});
