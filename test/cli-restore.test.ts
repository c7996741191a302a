// `restore`: a DELETE then a restore brings back every memory (same ids, content, confidence,
// links and vectors) and recall finds them again; restoring twice changes nothing; a damaged
// snapshot or one of another namespace is refused with one line and changes nothing; the
// command does not open the file while the service runs. Also `snapshots`.
import { openDatabase } from '../src/shared/db.js';
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { del, get, post, startTestService, tempDir, type TestService } from './support/service.js';
import { DIMENSIONS, dump, embedAll, prepareVectorDatabase, runCli, VECTOR_ENV } from './support/cli.js';

let dir: string;
let dbPath: string;
let snapshotId: string;
let stored: { id: string; content: string; confidence: number; stability: number }[] = [];
let beforeDelete: Record<string, unknown>;
let statsBefore: unknown;
const MARKER = 'kayak';

const start = (env: Record<string, string> = {}) => startTestService({ SERVICE_PATH: dbPath, ...VECTOR_ENV, ...env });
const cli = (...args: string[]) => runCli([...args, '--db', dbPath]);

before(async () => {
  dir = tempDir('memrt-restore-');
  dbPath = join(dir, 'memory.db');
  prepareVectorDatabase(dbPath);
  let t: TestService = await start();
  for (const [fact, confidence] of [[`owns a red ${MARKER}`, 0.91], [`paddles the ${MARKER} on Sundays`, 0.55], ['is afraid of sharks', 0.3]] as const) {
    stored.push((await post(t.base, '/v1/remember', { entity: 'river-user', fact, confidence })).body);
  }
  await post(t.base, '/v1/remember', { entity: 'bystander', fact: `also likes a ${MARKER}` });
  const episode = (await post(t.base, '/v1/episodes/start', { participants: ['river-user', 'guide-bot'] })).body.episode_id;
  await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: `my ${MARKER} has a leak` });
  await post(t.base, `/v1/episodes/${episode}/message`, { role: 'assistant', content: 'patch it with marine epoxy' });
  await t.close();
  // The service's backfill may already have embedded them; the fixture fills in the rest.
  embedAll(dbPath);
  assert.equal(embedAll(dbPath), 0, 'every memory has a vector');

  t = await start();
  beforeDelete = dump(dbPath);
  statsBefore = (await get(t.base, '/v1/stats')).body;
  const r = await del(t.base, '/v1/entities/river-user');
  assert.equal(r.status, 200);
  assert.equal(r.body.forgotten_count, 5);
  snapshotId = r.body.snapshot.snapshot_id;
  assert.equal((await post(t.base, '/v1/recall', { query: MARKER, entity: 'river-user' })).body.memories.length, 0);
  await t.close();
});

test('the snapshot carries every vector', () => {
  const snapshot = JSON.parse(readFileSync(join(dir, 'snapshots', `${snapshotId}.json`), 'utf8'));
  assert.equal(snapshot.memories.length, 5);
  // Each memory's vector exactly as the database held it before the delete.
  const stored = new Map((beforeDelete.vectors as { id: string; embedding: number[] }[]).map((v) => [v.id, v.embedding]));
  for (const m of snapshot.memories) assert.deepEqual(m.embedding, stored.get(m.id));
});

test('while the service runs, restore goes to it; unreachable, it fails with one line and changes nothing', async () => {
  const t = await start();
  try {
    const before = dump(dbPath);
    // --url overrides the URL the service recorded in the lock.
    const closed = await cli('restore', snapshotId, '--url', 'http://127.0.0.1:9');
    assert.equal(closed.code, 1);
    assert.match(closed.stderr, /^memory-runtime: the database is in use by .*pid \d+.*cannot be reached at http:\/\/127\.0\.0\.1:9/);
    assert.equal(closed.stderr.trim().split('\n').length, 1);
    assert.deepEqual(dump(dbPath), before);
  } finally {
    await t.close();
  }
});

test('snapshots lists the snapshot with its counts and date', async () => {
  const table = await cli('snapshots');
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, new RegExp(`${snapshotId}\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\s+default\\s+river-user\\s+5\\s+2/3/0\\s+5`));
  const json = await cli('snapshots', '--json');
  const [entry] = json.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(entry.snapshot_id, snapshotId);
  assert.equal(entry.memory_count, 5);
  assert.deepEqual(entry.counts, { episodic: 2, semantic: 3, procedural: 0 });
});

test('a damaged snapshot is refused with one line and changes nothing', async () => {
  const good = readFileSync(join(dir, 'snapshots', `${snapshotId}.json`), 'utf8');
  const before = dump(dbPath);
  const cases: [string, string][] = [
    ['0b3d6a36-0000-4000-8000-000000000001', good.slice(0, Math.floor(good.length / 2))], // truncated
    ['0b3d6a36-0000-4000-8000-000000000002', good.replace(/"confidence":0\.91/, '"confidence":7')], // out of range
    ['0b3d6a36-0000-4000-8000-000000000003', good.replace(/"memories":\[/, '"memories":[{"id":"x"},')], // a row without fields
    ['0b3d6a36-0000-4000-8000-000000000004', '\u0000\u0001 not json at all'],
  ];
  for (const [id, text] of cases) {
    writeFileSync(join(dir, 'snapshots', `${id}.json`), text.replace(snapshotId, id));
    const r = await cli('restore', id);
    assert.equal(r.code, 1, `${id}: ${r.stderr}`);
    assert.match(r.stderr, /^memory-runtime: snapshot .* is corrupt: /);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(r.stdout, '');
    assert.deepEqual(dump(dbPath), before, `${id} changed nothing`);
    rmSync(join(dir, 'snapshots', `${id}.json`));
  }
  const missing = await cli('restore', '0b3d6a36-0000-4000-8000-00000000000f');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /snapshot not found/);
});

test('a snapshot of another namespace needs --force', async () => {
  const before = dump(dbPath);
  const r = await runCli(['restore', snapshotId, '--db', dbPath, '--namespace', 'elsewhere']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /taken in namespace 'default', not 'elsewhere'; pass --force/);
  assert.deepEqual(dump(dbPath), before);
});

test('restore brings back every memory with its id, fields, links and vector', async () => {
  const r = await cli('restore', snapshotId);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^restored 5 memories from snapshot .*: 0 already present, 5 vectors\n$/);
  // Byte for byte what was there before the delete: memories, links, vectors, FTS index.
  assert.deepEqual(dump(dbPath), beforeDelete);
  const vectors = (dump(dbPath).vectors as { id: string; embedding: number[] }[]);
  assert.equal(vectors.length, 6, "five restored and the bystander's");
  for (const v of vectors) assert.equal(v.embedding.length, DIMENSIONS);
  // Restored vectors wait in the IVF's unassigned cell (which every recall scans), marked embedded.
  const db = openDatabase(dbPath, { readonly: true });
  try {
    assert.deepEqual(db.prepare('SELECT DISTINCT cell FROM memory_vectors').pluck().all().map(Number), [0]);
    assert.equal(db.prepare('SELECT count(*) FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid WHERE m.embedded = 1 AND m.vector_cell = 0').pluck().get(), 6);
  } finally {
    db.close();
  }
});

test('restoring twice changes nothing', async () => {
  const before = dump(dbPath);
  const r = await cli('restore', snapshotId);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^nothing to restore: all 5 memories .* are already present/);
  assert.deepEqual(dump(dbPath), before);
});

test('the service recalls the restored memories again', async () => {
  const t = await start();
  try {
    assert.deepEqual((await get(t.base, '/v1/stats')).body, statsBefore);
    const recall = await post(t.base, '/v1/recall', { query: MARKER, entity: 'river-user', limit: 10 });
    const ids = recall.body.memories.map((m: any) => m.id);
    for (const s of stored.slice(0, 2)) assert.ok(ids.includes(s.id), `recall finds ${s.content}`);
    assert.ok(recall.body.memories.some((m: any) => m.memory_type === 'episodic'), 'the episode turn is back');
    const inspect = await post(t.base, '/v1/inspect', { entity: 'river-user' });
    assert.equal(inspect.status, 200);
    for (const s of stored) {
      const m = inspect.body.semantic.find((x: any) => x.id === s.id);
      assert.ok(m, s.content);
      assert.deepEqual([m.content, m.confidence, m.stability], [s.content, s.confidence, s.stability]);
    }
  } finally {
    await t.close();
  }
});
