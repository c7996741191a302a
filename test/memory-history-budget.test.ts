// GET /v1/memories/{id}/history keeps to the response budget as recall and inspect do
// (SERVICE_MAX_RESPONSE_BYTES, docs/api-behaviour.md): one entity's many values of one attribute
// must not make an answer as large as the tenant cares to make it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { post, startTestService, type TestService } from './support/service.js';

const BUDGET = 1024 * 1024;
let t: TestService;
before(async () => { t = await startTestService({ SERVICE_MAX_RESPONSE_BYTES: String(BUDGET) }); });
after(() => t.close());

test('a history answer stays within SERVICE_MAX_RESPONSE_BYTES (or says it was cut)', async () => {
  const padding = 'x'.repeat(20_000);
  let last = '';
  for (let batch = 0; batch < 2; batch++) {
    const facts = Array.from({ length: 35 }, (_, i) => ({
      entity: 'hb-dan', fact: `hb-dan lives in city ${batch}-${i} ${padding}`,
      valid_from: new Date(Date.UTC(2000 + batch, 0, 1 + i)).toISOString(),
    }));
    const r = await post(t.base, '/v1/remember/batch', { facts });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    last = r.body.results.at(-1).memory.id;
  }
  const res = await fetch(`${t.base}/v1/memories/${last}/history`);
  const text = await res.text();
  assert.equal(res.status, 200);
  assert.ok(text.length <= BUDGET || res.headers.get('x-result-truncated') === 'true',
    `history answered ${text.length} bytes over a ${BUDGET}-byte budget, uncut (${JSON.parse(text).chain.length} chain links)`);
  // Cut, the answer is still whole and says so: the memory, the links closest to it, oldest first.
  const body = JSON.parse(text);
  assert.equal(res.headers.get('x-result-truncated'), 'true');
  assert.ok(text.length <= BUDGET, `${text.length} bytes`);
  assert.equal(body.memory.id, last);
  assert.ok(body.chain.length > 1 && body.chain.length < 70, `${body.chain.length} links`);
  assert.equal(body.chain.at(-1).id, last, 'the newest value is the memory itself');
  const times = body.chain.map((link: { occurred_at: string }) => Date.parse(link.occurred_at));
  assert.deepEqual(times, [...times].sort((a, b) => a - b));
});
