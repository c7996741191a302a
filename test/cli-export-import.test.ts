// `export` → `import` into a fresh database round-trips a namespace exactly (every row,
// column, link and vector; exporting the copy gives the same lines), importing twice changes
// nothing, a truncated or damaged file is refused with its line number and changes nothing,
// and export streams to stdout while the service runs.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { del, get, post, startTestService, tempDir } from './support/service.js';
import { dump, embedAll, prepareVectorDatabase, runCli, TEST_EMBEDDER, VECTOR_ENV } from './support/cli.js';

let dir: string;
let source: string;
let copy: string;
let exported: string;
let sourceStats: unknown;

/** The lines minus the header's export time, which is the only thing allowed to differ. */
const comparable = (text: string) => text.replace(/"exported_at":"[^"]*"/, '"exported_at":"-"');

before(async () => {
  dir = tempDir('memrt-export-');
  source = join(dir, 'source', 'memory.db');
  copy = join(dir, 'copy', 'memory.db');
  mkdirSync(join(dir, 'source'));
  prepareVectorDatabase(source);
  const t = await startTestService({ SERVICE_PATH: source, ...VECTOR_ENV });
  await post(t.base, '/v1/entities', { name: 'planner-agent', kind: 'agent' });
  await post(t.base, '/v1/entities', { name: 'ops/team "blue"', kind: 'team' });
  await post(t.base, '/v1/remember', { entity: 'ada', fact: 'Ada lives in Zürich', confidence: 0.95 });
  await post(t.base, '/v1/remember', { entity: 'ada', fact: 'Ada prefers tea to coffee ☕', confidence: 0.4 });
  await post(t.base, '/v1/remember', { entity: 'ops/team "blue"', fact: 'deploys on Tuesdays' });
  await post(t.base, '/v1/remember', { entity: 'gone', fact: 'will be deleted' });
  const episode = (await post(t.base, '/v1/episodes/start', { participants: ['ada', 'planner-agent'] })).body.episode_id;
  await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'I moved to Zürich last year' });
  await post(t.base, `/v1/episodes/${episode}/message`, { role: 'assistant', content: 'Noted: you live in Zürich.' });
  await post(t.base, `/v1/episodes/${episode}/end`, { outcome: 'success' });
  await post(t.base, '/v1/episodes/start', { participants: ['ada'] }); // an open episode without messages
  await del(t.base, '/v1/entities/gone'); // the entity goes too: 3 entities are exported
  sourceStats = (await get(t.base, '/v1/stats')).body;

  await t.close();
  embedAll(source);

  // Export while the service runs: it only reads.
  const out = join(dir, 'ns.jsonl');
  const t2 = await startTestService({ SERVICE_PATH: source, ...VECTOR_ENV });
  try {
    const r = await runCli(['export', '--db', source, '--output', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /exported namespace 'default': 3 entities, 2 episodes, \d+ memories/);
  } finally {
    await t2.close();
  }
  exported = readFileSync(out, 'utf8');
});

test('the export is JSON lines: a header, then entities, episodes and memories with links and vectors', () => {
  const lines = exported.trim().split('\n').map((l) => JSON.parse(l));
  const [header, ...rows] = lines;
  assert.equal(header.type, 'header');
  assert.equal(header.namespace, 'default');
  assert.equal(header.embedder, TEST_EMBEDDER);
  const types = rows.map((r) => r.type);
  assert.deepEqual(types, [...types].sort((a, b) => ['entity', 'episode', 'memory'].indexOf(a) - ['entity', 'episode', 'memory'].indexOf(b)));
  assert.equal(types.filter((t) => t === 'memory').length, header.counts.memories);
  for (const m of rows.filter((r) => r.type === 'memory')) {
    assert.ok(Array.isArray(m.links) && m.links.length > 0, 'links');
    assert.equal(m.embedding.length, 4);
    assert.equal('rowid' in m || 'namespace_id' in m, false, 'no database-local ids');
  }
  assert.ok(!exported.includes('will be deleted'), 'deleted memories are not exported');
});

test('import into a fresh database round-trips the namespace exactly', async () => {
  const file = join(dir, 'ns.jsonl');
  const r = await runCli(['import', file, '--db', copy]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^imported into namespace 'default': 3 entities, 2 episodes, \d+ memories, \d+ vectors; already present: 0 entities, 0 episodes, 0 memories\n$/);
  const again = await runCli(['export', '--db', copy]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(comparable(again.stdout), comparable(exported));
  // Every table is identical, row for row (rowids aside, which are local to a file).
  const a = dump(source) as any;
  const b = dump(copy) as any;
  for (const key of ['entities', 'episodes', 'participants', 'memories', 'links', 'vectors', 'fts', 'namespaces']) {
    assert.deepEqual(b[key], a[key], key);
  }
  const t = await startTestService({ SERVICE_PATH: copy, ...VECTOR_ENV });
  try {
    assert.deepEqual((await get(t.base, '/v1/stats')).body, sourceStats);
    const recall = await post(t.base, '/v1/recall', { query: 'Zürich', entity: 'ada' });
    assert.ok(recall.body.memories.length >= 2);
  } finally {
    await t.close();
  }
});

test('importing the same file twice changes nothing', async () => {
  const before = dump(copy);
  const r = await runCli(['import', join(dir, 'ns.jsonl'), '--db', copy]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /: 0 entities, 0 episodes, 0 memories, 0 vectors; already present: 3 entities, 2 episodes, \d+ memories/);
  assert.deepEqual(dump(copy), before);
});

test('a truncated or damaged file is refused with its line and changes nothing', async () => {
  const lines = exported.trim().split('\n');
  const cases: [string, RegExp][] = [
    [lines.slice(0, -1).join('\n'), /the file is incomplete: \d+ memories read, the header announces \d+/],
    [[...lines.slice(0, 3), '{"type":"memory", "id": ', ...lines.slice(3)].join('\n'), /line 4: not valid JSON/],
    [lines.map((l, i) => (i === lines.length - 1 ? l.replace(/"confidence":[\d.]+/, '"confidence":-1') : l)).join('\n'), /line \d+: memory row: confidence: must be >= 0/],
    [lines.slice(1).join('\n'), /line 1: not an export header/],
    ['', /no export header/],
  ];
  for (const [text, reason] of cases) {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, text);
    const before = dump(copy);
    const r = await runCli(['import', file, '--db', copy]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^memory-runtime: import failed, nothing was changed: /);
    assert.match(r.stderr, reason);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.deepEqual(dump(copy), before);
  }
  // Into a fresh database, a truncated file leaves no rows behind either.
  const fresh = join(dir, 'fresh', 'memory.db');
  writeFileSync(join(dir, 'bad.jsonl'), lines.slice(0, -2).join('\n'));
  const r = await runCli(['import', join(dir, 'bad.jsonl'), '--db', fresh]);
  assert.equal(r.code, 1);
  const left = dump(fresh) as any;
  assert.deepEqual([left.namespaces, left.entities, left.memories], [[], [], []]);
});

test('import reads stdin; import into another namespace of the same database is a clear conflict', async () => {
  const fresh = join(dir, 'stdin', 'memory.db');
  const r = await runCli(['import', '-', '--db', fresh], { input: exported });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual((dump(fresh) as any).memories, (dump(source) as any).memories);
  const before = dump(copy);
  const clash = await runCli(['import', join(dir, 'ns.jsonl'), '--db', copy, '--namespace', 'second']);
  assert.equal(clash.code, 1);
  assert.match(clash.stderr, /already exists in namespace 'default'/);
  assert.deepEqual(dump(copy), before);
});

test('bad invocations exit non-zero with one line', async () => {
  for (const [args, code] of [[['import'], 2], [['import', join(dir, 'missing.jsonl'), '--db', copy], 1], [['export', '--db', join(dir, 'none.db')], 1],
    [['export', '--db', source, '--namespace', 'nope'], 1], [['export', '--db', source, 'extra'], 2]] as [string[], number][]) {
    const r = await runCli(args);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^memory-runtime: /);
  }
});

test('a file written before the conversation context gives imported turns their previous turn as context', async () => {
  // Export lines as the build before migration 6 wrote them: memories without `context`.
  const older = exported.trim().split('\n').map((line) => {
    const row = JSON.parse(line);
    if (row.type === 'memory') delete row.context;
    return JSON.stringify(row);
  }).join('\n');
  const file = join(dir, 'older.jsonl');
  writeFileSync(file, older);
  const target = join(dir, 'older', 'memory.db');
  const r = await runCli(['import', file, '--db', target]);
  assert.equal(r.code, 0, r.stderr);
  const contexts = (path: string) => (dump(path) as any).memories.map((m: any) => [m.id, m.context]);
  assert.ok(contexts(source).some(([, context]: [string, string]) => context === 'I moved to Zürich last year'), 'the fixture: a turn with context');
  assert.deepEqual(contexts(target), contexts(source));
});
