// GET /metrics: Prometheus text behind the same auth as every route, with the named series,
// and the counters and histograms move when requests are made.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { get, post, startTestService, type TestService } from './support/service.js';
import { has, parseSamples, sample, type Samples } from './support/prometheus.js';

const P = 'memory_runtime_';
const KEY = 'scrape-key';
const auth = (key: string) => ({ authorization: `Bearer ${key}` });

let t: TestService;
before(async () => {
  // A generous budget for the scraper's key, a separate key to exhaust.
  t = await startTestService({ SERVICE_API_KEYS: `${KEY},burst-key`, SERVICE_RATE_LIMIT: '40' });
});
after(() => t.close());

async function scrape(): Promise<Samples> {
  const r = await get(t.base, '/metrics', auth(KEY));
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
  return parseSamples(r.body);
}

test('/metrics needs a key when keys are set', async () => {
  const r = await get(t.base, '/metrics');
  assert.equal(r.status, 401);
  assert.equal(typeof r.body.error, 'string');
  assert.equal((await get(t.base, '/metrics', auth('not-a-key'))).status, 401);
});

test('every unlabelled series is exposed from the first scrape', async () => {
  // Labelled series (per route, per recall stage) appear with their first observation; the
  // next test covers them.
  const samples = await scrape();
  for (const name of [
    'writer_queue_depth', 'writer_batch_commands_count', 'writer_commit_duration_seconds_count', 'pool_utilization_ratio',
    'pool_queue_size', 'rate_limit_rejections_total', 'embedding_floor_vectors_total', 'process_resident_memory_bytes',
  ]) {
    assert.ok(has(samples, P + name), `${P}${name} is exposed`);
  }
  for (const type of ['episodic', 'semantic', 'procedural']) assert.ok(samples.has(`${P}memories{type="${type}"}`), type);
});

test('the series move when requests are made', async () => {
  const before = await scrape();
  const h = auth(KEY);
  assert.equal((await post(t.base, '/v1/remember', { entity: 'metric-user', fact: 'likes green tea' }, h)).status, 201);
  assert.equal((await post(t.base, '/v1/remember', { entity: 'metric-user', fact: 'drinks oolong' }, h)).status, 201);
  assert.equal((await post(t.base, '/v1/recall', { query: 'tea' }, h)).status, 200);
  assert.equal((await post(t.base, '/v1/recall_grouped', { query: 'oolong' }, h)).status, 200);
  assert.equal((await post(t.base, '/v1/recall', { query: 7 }, h)).status, 422);
  assert.equal((await get(t.base, '/no/such/path/12345', h)).status, 404);
  let refused = 0;
  for (let i = 0; i < 45 && refused === 0; i++) {
    if ((await get(t.base, '/v1/health', auth('burst-key'))).status === 429) refused++;
  }
  assert.equal(refused, 1, 'the burst key hit its limit');
  const now = await scrape();
  const delta = (name: string, labels: Record<string, string> = {}) => sample(now, P + name, labels) - sample(before, P + name, labels);

  assert.equal(delta('http_requests_total', { route: '/v1/remember', status: '201', method: 'POST' }), 2);
  assert.equal(delta('http_request_duration_seconds_count', { route: '/v1/remember', status: '201' }), 2);
  assert.ok(delta('http_request_duration_seconds_sum', { route: '/v1/remember' }) > 0);
  assert.equal(delta('http_requests_total', { route: '/v1/recall', status: '422' }), 1);
  // Unknown URLs share one label value: raw paths never become series.
  assert.equal(delta('http_requests_total', { route: 'unmatched', status: '404' }), 1);
  assert.ok(![...now.keys()].some((key) => key.includes('12345')), 'no raw URL in any label');
  assert.ok(delta('http_requests_total', { route: '/v1/health', status: '429' }) >= 1);
  assert.ok(delta('rate_limit_rejections_total') >= 1);

  assert.ok(delta('writer_batch_commands_count') >= 1, 'batches observed');
  assert.ok(delta('writer_batch_commands_sum') >= 2, 'two commands committed');
  assert.ok(delta('writer_commit_duration_seconds_count') >= 1, 'commits observed');
  for (const stage of ['embed', 'bm25', 'vector', 'graph', 'strength', 'fusion', 'hydrate']) {
    assert.equal(delta('recall_stage_duration_seconds_count', { stage }), 2, `stage ${stage} timed once per recall`);
  }
  assert.equal(sample(now, `${P}memories`, { type: 'semantic' }), 2);
  assert.equal(sample(now, `${P}memories`, { type: 'episodic' }), 0);
  assert.ok(sample(now, `${P}pool_utilization_ratio`) >= 0 && sample(now, `${P}pool_utilization_ratio`) <= 1);
  // Background writes (the recalls' reinforcement, flushed every 250 ms; vector attachment) can
  // be in the writer at any scrape: the gauge must come back to 0, not be 0 at one instant.
  let depth = sample(now, `${P}writer_queue_depth`);
  for (let i = 0; i < 50 && depth !== 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    depth = sample(await scrape(), `${P}writer_queue_depth`);
  }
  assert.equal(depth, 0, 'nothing pending between requests');
});

test('each episode end counts the extractor that served it', async () => {
  const before = await scrape();
  const { body } = await post(t.base, '/v1/episodes/start', { participants: ['metrics-user'] }, auth(KEY));
  await post(t.base, `/v1/episodes/${body.episode_id}/message`, { role: 'user', content: 'I live in Quito' }, auth(KEY));
  assert.equal((await post(t.base, `/v1/episodes/${body.episode_id}/end`, {}, auth(KEY))).status, 200);
  const after = await scrape();
  // The test service's extractor URL is a closed port, so the rule-based fallback served it.
  assert.equal(sample(after, `${P}extractions_total`, { extractor: 'rules' }) - sample(before, `${P}extractions_total`, { extractor: 'rules' }), 1);
});

test('recall responses carry no internal timings', async () => {
  const r = await post(t.base, '/v1/recall', { query: 'tea' }, auth(KEY));
  assert.deepEqual(Object.keys(r.body).sort(), ['contradictions', 'memories']);
  const g = await post(t.base, '/v1/recall_grouped', { query: 'tea' }, auth(KEY));
  assert.deepEqual(Object.keys(g.body), ['groups']);
});

test('scrape-time levels follow their sources; the embedding backlog appears only once provided', async () => {
  const { ServiceMetrics } = await import('../src/core/metrics.js');
  const limiter = { rejected: 2 };
  const backfill = { embeddedByFloor: 3 };
  const sources = {
    backfill,
    writer: { queueDepth: 3 }, pool: { utilization: 0.5, queueSize: 4 }, limiter,
    stats: async () => ({ namespace: 'n', entities: 1, episodic_memories: 5, semantic_memories: 6, procedural_memories: 7 }),
  };
  const without = new ServiceMetrics();
  without.bind(sources);
  assert.equal(has(parseSamples(await without.render()), `${P}embedding_backlog`), false);

  const metrics = new ServiceMetrics();
  const index = { cells: 158, stale: 12 };
  metrics.bind({ ...sources, embeddingBacklog: () => 9, vectorIndex: () => index });
  let samples = parseSamples(await metrics.render());
  assert.equal(sample(samples, `${P}embedding_backlog`), 9);
  assert.equal(sample(samples, `${P}vector_index_cells`), 158);
  assert.equal(sample(samples, `${P}vector_index_stale`), 12);
  assert.equal(sample(samples, `${P}writer_queue_depth`), 3);
  assert.equal(sample(samples, `${P}pool_queue_size`), 4);
  assert.equal(sample(samples, `${P}memories`, { type: 'procedural' }), 7);
  assert.equal(sample(samples, `${P}rate_limit_rejections_total`), 2);
  assert.equal(sample(samples, `${P}embedding_floor_vectors_total`), 3);
  limiter.rejected = 5;
  backfill.embeddedByFloor = 11;
  samples = parseSamples(await metrics.render());
  assert.equal(sample(samples, `${P}rate_limit_rejections_total`), 5, 'the counter follows the running total');
  assert.equal(sample(samples, `${P}embedding_floor_vectors_total`), 11, 'the counter follows the running total');
});
