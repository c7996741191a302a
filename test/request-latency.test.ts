// The hand-kept request-latency histogram must expose exactly what a prom-client Histogram
// fed the same observations exposes: same series, labels, bucket counts, sums and counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { RequestLatencyHistogram } from '../src/core/request-latency.js';

const BOUNDS = [0.001, 0.01, 0.1, 1];
const NAME = 'x_http_request_duration_seconds';

test('the request-latency histogram prints what prom-client prints for the same observations', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const histogram = new RequestLatencyHistogram(NAME, 'latency', BOUNDS, ours);
  const reference = new Histogram({ name: NAME, help: 'latency', labelNames: ['method', 'route', 'status'], buckets: BOUNDS, registers: [theirs] });
  const observations: [string, string, number, number][] = [
    ['GET', '/v1/health', 200, 0.0004], ['GET', '/v1/health', 200, 0.001], ['GET', '/v1/health', 200, 0.05],
    ['POST', '/v1/recall', 200, 0.2], ['POST', '/v1/recall', 422, 0.0001], ['GET', 'unmatched', 404, 3],
    ['POST', '/v1/remember', 201, 0.01], ['GET', '/v1/health', 503, 0],
  ];
  for (const [method, route, status, seconds] of observations) {
    histogram.observe(method, route, status, seconds);
    reference.observe({ method, route, status }, seconds);
  }
  // Line for line, in prom-client's order (series in first-seen order: /v1/health 200 before
  // /v1/recall, and /v1/health 503, seen last, after them all).
  assert.equal(await ours.metrics(), await theirs.metrics());
  // The same order within a series, too (prom-client's: buckets, +Inf, _sum, _count).
  const series = (text: string) => text.split('\n').filter((l) => l.includes('route="/v1/health",status="200"'));
  assert.deepEqual(series(await ours.metrics()), series(await theirs.metrics()));

  histogram.reset();
  assert.doesNotMatch(await ours.metrics(), /_count/);
});

test('a duration that is not a finite non-negative number is not counted (prom-client refuses it)', async () => {
  const registry = new Registry();
  const histogram = new RequestLatencyHistogram(NAME, 'latency', BOUNDS, registry);
  histogram.observe('GET', '/v1/health', 200, 0.002);
  for (const bad of [Number.NaN, Infinity, -1]) histogram.observe('GET', '/v1/health', 200, bad);
  const text = await registry.metrics();
  assert.match(text, /_sum\{method="GET",route="\/v1\/health",status="200"\} 0\.002\n/);
  assert.match(text, /_count\{method="GET",route="\/v1\/health",status="200"\} 1\n/);
});

test('overlapping /metrics renders each count every request once', async () => {
  const { ServiceMetrics } = await import('../src/core/metrics.js');
  const metrics = new ServiceMetrics();
  for (let i = 0; i < 5; i++) metrics.observeRequest('GET', '/v1/health', 200, 0.001);
  // Two renders started in the same tick (prom-client collects metrics concurrently).
  const [first, second] = await Promise.all([metrics.registry.metrics(), metrics.registry.metrics()]);
  for (const text of [first, second]) {
    assert.match(text, /_http_requests_total\{method="GET",route="\/v1\/health",status="200"\} 5\n/);
  }
});
