// Recall with `explain: true` (issue 15): per memory, each signal's rank and contribution to
// the fused score, over REST and MCP; absent unless asked for.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { post, startTestService, tempDir, type TestService } from './support/service.js';
import { untilEmbedded } from './support/embedded.js';
import { prepareVectorDatabase, VECTOR_ENV } from './support/cli.js';
import { memoryInserter } from './support/rows.js';
import { openDatabase } from '../src/shared/db.js';

let t: TestService;
before(async () => {
  t = await startTestService();
  for (const fact of ['Ivy grows tomatoes on her balcony', 'Ivy lives in Porto', 'Ivy drives a blue tram to work', 'Noor grows tomatoes too']) {
    assert.equal((await post(t.base, '/v1/remember', { entity: fact.split(' ')[0].toLowerCase(), fact })).status, 201);
  }
  const episode = (await post(t.base, '/v1/episodes/start', { participants: ['ivy', 'garden bot'] })).body.episode_id;
  for (const content of ['what do you grow up there?', 'mostly basil, and tomatoes in summer', 'nice, any trouble with pests?']) {
    await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content });
  }
  // The tests below compare recalls: rank with every vector attached (support/embedded.ts).
  await untilEmbedded(t.service);
});
after(() => t.close());

const SIGNALS = ['lexical', 'vector', 'feedback', 'adjacent', 'session', 'entity', 'tie_break', 'time'];

interface Explained {
  id: string;
  score: number;
  explanation?: { score: number; signals: { signal: string; rank: number | null; raw: number | null; weight: number; contribution: number }[] };
}

function assertExplained(memories: Explained[]): void {
  assert.ok(memories.length > 0);
  for (const memory of memories) {
    const explanation = memory.explanation!;
    assert.ok(explanation, `${memory.id} has an explanation`);
    assert.deepEqual(explanation.signals.map((s) => s.signal), SIGNALS);
    const sum = explanation.signals.reduce((total, s) => total + s.contribution, 0);
    assert.ok(Math.abs(sum - explanation.score) < 1e-9, `contributions ${sum} add up to ${explanation.score}`);
    assert.ok(Math.abs(memory.score - explanation.score) <= 5e-7, 'the explained score is the returned one');
    for (const s of explanation.signals) {
      assert.ok(s.rank === null || (Number.isInteger(s.rank) && s.rank >= 1));
      assert.ok(Number.isFinite(s.contribution) && Number.isFinite(s.weight));
    }
  }
}

test('explain: true gives every memory its signals, whose contributions sum to the score the ranking used', async () => {
  const r = await post(t.base, '/v1/recall', { query: 'who grows tomatoes on a balcony', limit: 6, explain: true });
  assert.equal(r.status, 200);
  const memories: Explained[] = r.body.memories;
  assertExplained(memories);
  const scores = memories.map((m) => m.explanation!.score);
  assert.deepEqual(scores, [...scores].sort((a, b) => b - a), 'ranked by the explained score');
  const top = memories[0].explanation!.signals.find((s) => s.signal === 'lexical')!;
  assert.equal(top.rank, 1);
  assert.ok(top.raw! > 0 && top.contribution > 0);
  // Same ranking with and without explain.
  const plain = await post(t.base, '/v1/recall', { query: 'who grows tomatoes on a balcony', limit: 6 });
  assert.deepEqual(plain.body.memories.map((m: Explained) => [m.id, m.score]), memories.map((m) => [m.id, m.score]));
});

test('without explain (or explain: false) no memory carries an explanation', async () => {
  for (const body of [{ query: 'tomatoes' }, { query: 'tomatoes', explain: false }]) {
    const r = await post(t.base, '/v1/recall', body);
    assert.equal(r.status, 200);
    assert.ok(r.body.memories.length > 0);
    for (const memory of r.body.memories) assert.ok(!('explanation' in memory));
  }
  const grouped = await post(t.base, '/v1/recall_grouped', { query: 'tomatoes' });
  for (const group of grouped.body.groups) for (const memory of group.memories) assert.ok(!('explanation' in memory));
});

test('recall_grouped explains too; a non-boolean explain is 422 naming it', async () => {
  const grouped = await post(t.base, '/v1/recall_grouped', { query: 'basil and tomatoes', explain: true });
  assert.equal(grouped.status, 200);
  assertExplained(grouped.body.groups.flatMap((g: { memories: Explained[] }) => g.memories));
  for (const path of ['/v1/recall', '/v1/recall_grouped']) {
    const bad = await post(t.base, path, { query: 'tomatoes', explain: 'yes' });
    assert.deepEqual([bad.status, bad.body.code], [422, 'MALFORMED_BODY']);
    assert.match(bad.body.error, /explain/);
  }
});

test('the MCP recall tool takes explain', async () => {
  const client = new Client({ name: 'explain-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', t.base)));
  try {
    const explained = await client.callTool({ name: 'recall', arguments: { query: 'Porto', explain: true } });
    assertExplained((explained.structuredContent as { memories: Explained[] }).memories);
    const plain = await client.callTool({ name: 'recall', arguments: { query: 'Porto' } });
    for (const memory of (plain.structuredContent as { memories: Explained[] }).memories) assert.ok(!('explanation' in memory));
  } finally {
    await client.close();
  }
});

test('explanations count in the response budget: an explained answer stays within SERVICE_MAX_RESPONSE_BYTES', async () => {
  const dir = tempDir('memrt-explain-budget-');
  const db = join(dir, 'memory.db');
  prepareVectorDatabase(db);
  const writable = openDatabase(db, { readonly: false });
  const insert = memoryInserter(writable, 1);
  // 1,000 facts of ~1,000 characters: without explanations ~835 fit 1 MiB; each explanation adds ~600 bytes.
  writable.transaction(() => {
    for (let i = 0; i < 1000; i++) insert({ id: randomUUID(), content: `budget fact ${i} ${'lorem ipsum '.repeat(83)}` });
  })();
  writable.close();
  const budget = 1024 * 1024;
  const s = await startTestService({ SERVICE_PATH: db, SERVICE_MAX_RESPONSE_BYTES: String(budget), ...VECTOR_ENV });
  try {
    const r = await post(s.base, '/v1/recall', { query: 'budget fact lorem', limit: 1000, explain: true });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-result-truncated'), 'true');
    assert.ok(r.body.memories.every((m: Explained) => m.explanation));
    const bytes = Buffer.byteLength(JSON.stringify(r.body));
    assert.ok(bytes <= budget + 4096, `${bytes} bytes for a ${budget}-byte budget`);
    const grouped = await post(s.base, '/v1/recall_grouped', { query: 'budget fact lorem', limit: 1000, explain: true });
    assert.equal(grouped.status, 200);
    assert.ok(Buffer.byteLength(JSON.stringify(grouped.body)) <= budget + 4096);
  } finally {
    await s.close();
  }
});
