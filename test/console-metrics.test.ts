// The console's reading of /metrics (src/console/js/metrics.js, run here under Node): the
// latency histogram per route from a real service's exposition, and quantiles as Prometheus'
// histogram_quantile computes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { histogramDelta, histogramsByRoute, mergeHistograms, parseSamples, quantile, type Histogram } from '../src/console/js/metrics.js';
import { get, post, startTestService } from './support/service.js';

const histogram = (buckets: Array<[number, number]>): Histogram => ({ buckets, count: buckets[buckets.length - 1][1], sum: 0 });

test('quantiles interpolate inside the bucket, like histogram_quantile', () => {
  // 10 observations: 4 at ≤ 0.01 s, 6 more at ≤ 0.1 s.
  const h = histogram([[0.01, 4], [0.1, 10], [Infinity, 10]]);
  assert.equal(quantile(h, 0.2), 0.005);
  assert.ok(Math.abs(quantile(h, 0.7)! - (0.01 + 0.09 * 0.5)) < 1e-12);
  assert.equal(quantile(h, 1), 0.1);
  // In +Inf the answer is the highest finite bound; no observation, no answer.
  assert.equal(quantile(histogram([[0.01, 0], [Infinity, 3]]), 0.5), 0.01);
  assert.equal(quantile(histogram([[0.01, 0], [Infinity, 0]]), 0.5), null);
});

test('the delta between two scrapes is what happened between them; a reset starts over', () => {
  const before = histogram([[0.01, 4], [Infinity, 5]]);
  const now = histogram([[0.01, 6], [Infinity, 9]]);
  assert.deepEqual(histogramDelta(now, before), { buckets: [[0.01, 2], [Infinity, 4]], count: 4, sum: 0 });
  assert.equal(histogramDelta(before, now), before);
});

test("a real service's request histogram, per route and merged", async () => {
  const t = await startTestService({ SERVICE_EMBEDDER: 'hash' });
  try {
    for (let i = 0; i < 3; i++) await get(t.base, '/v1/stats');
    await post(t.base, '/v1/remember', { entity: 'm', fact: 'a "quoted" fact' });
    const samples = parseSamples((await get(t.base, '/metrics')).body);
    const byRoute = histogramsByRoute(samples, undefined, (route) => route !== '/metrics');
    assert.equal(byRoute.get('/v1/stats')?.count, 3);
    assert.equal(byRoute.get('/v1/remember')?.count, 1);
    assert.ok(!byRoute.has('/metrics'));
    const stats = byRoute.get('/v1/stats')!;
    assert.equal(stats.buckets[stats.buckets.length - 1][0], Infinity);
    assert.equal(stats.buckets[stats.buckets.length - 1][1], 3);
    assert.ok(stats.buckets.every(([, n], i) => i === 0 || n >= stats.buckets[i - 1][1]), 'cumulative');
    const p50 = quantile(stats, 0.5)!;
    assert.ok(p50 > 0 && p50 <= stats.buckets[stats.buckets.length - 2][0]);
    assert.equal(mergeHistograms(byRoute.values()).count, [...byRoute.values()].reduce((n, h) => n + h.count, 0));
  } finally {
    await t.close();
  }
});
