// Online restore (issue 15): GET /v1/snapshots and POST /v1/snapshots/{snapshot_id}/restore on
// a running service, through its writer, while other writes keep coming.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { del, get, post, rememberMany, startTestService, tempDir, type TestService } from './support/service.js';
import { acquireLock, holderPathFor } from '../src/shared/instance-lock.js';
import { prepareVectorDatabase, runCli } from './support/cli.js';
import { MemoryClient } from '../src/client/index.js';

let t: TestService;
before(async () => {
  // The hash embedder (every service here): nothing is about USE-lite's ranking, and its backfill
  // of the 1,200 seeded rows competed with the restore under test for the CPU (the file took ~70 s).
  t = await startTestService({ SERVICE_EMBEDDER: 'hash' });
});
after(() => t.close());

async function deleteEntity(entity: string): Promise<string> {
  const r = await del(t.base, `/v1/entities/${encodeURIComponent(entity)}`);
  assert.equal(r.status, 200);
  return r.body.snapshot.snapshot_id;
}

const restore = (id: string) => post(t.base, `/v1/snapshots/${id}/restore`);

test('a large snapshot is restored online while other writes stream in: nothing lost, restored memories recallable at once', async () => {
  // 1,200 memories: more than two of the restore's chunks.
  const facts = await rememberMany(t.base, 'walrus keeper', 1200, 'walrus ledger');
  const episode = (await post(t.base, '/v1/episodes/start', { participants: ['walrus keeper', 'zookeeper bot'] })).body.episode_id;
  await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'the walrus named Olaf prefers herring' });
  const snapshotId = await deleteEntity('walrus keeper');
  assert.equal((await post(t.base, '/v1/recall', { query: 'walrus ledger drawer', entity: 'walrus keeper' })).body.memories.length, 0);

  let streaming = true;
  const written: string[] = [];
  const writer = async (lane: number) => {
    for (let i = 0; streaming || i < 5; i++) {
      const r = await post(t.base, '/v1/remember', { entity: 'stream writer', fact: `stream fact ${lane}-${i}` });
      assert.equal(r.status, 201);
      written.push(r.body.id);
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  const commandsBefore = t.service.writer.stats.commands;
  const r = await restore(snapshotId);
  streaming = false;
  // 1,201 memories in chunks of at most 500 (fewer when a chunk hits the writer's 40 ms budget).
  assert.ok(t.service.writer.stats.commands - commandsBefore >= 3 + written.length, 'the restore ran as several writer commands');
  await Promise.all(writers);

  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {
    snapshot_id: snapshotId, namespace: 'default', entity: 'walrus keeper', restored_count: 1201, already_present_count: 0,
  });
  // Every write acknowledged during the restore is there.
  const streamed = await post(t.base, '/v1/inspect', { entity: 'stream writer', limit: 1000 });
  assert.deepEqual(streamed.body.semantic.map((m: { id: string }) => m.id).sort(), [...written].sort());
  // Restored with their ids, and recallable by their words at once (FTS is written with the row).
  const stats = (await get(t.base, '/v1/stats')).body;
  assert.deepEqual([stats.semantic_memories, stats.episodic_memories], [1200 + written.length, 1]);
  const inspect = await post(t.base, '/v1/inspect', { entity: 'walrus keeper', limit: 1000 });
  const ids = new Set(facts.map((f) => f.id));
  assert.equal(inspect.body.semantic.length, 999);
  assert.ok(inspect.body.semantic.every((m: { id: string }) => ids.has(m.id)));
  const recalled = await post(t.base, '/v1/recall', { query: 'walrus ledger number 1117', entity: 'walrus keeper', limit: 3 });
  assert.equal(recalled.body.memories[0].id, facts[1117].id);
  const turn = await post(t.base, '/v1/recall', { query: 'Olaf herring', limit: 3 });
  assert.equal(turn.body.memories[0].content, 'the walrus named Olaf prefers herring');
});

test('restoring twice changes nothing; the listing shows the snapshot with its counts', async () => {
  await rememberMany(t.base, 'otter fan', 3, 'otter note');
  const snapshotId = await deleteEntity('otter fan');
  const listed = await get(t.base, '/v1/snapshots');
  assert.equal(listed.status, 200);
  const item = listed.body.snapshots.find((s: { snapshot_id: string }) => s.snapshot_id === snapshotId);
  assert.deepEqual({ ...item, captured_at: typeof item.captured_at }, {
    snapshot_id: snapshotId, captured_at: 'string', namespace: 'default', entity: 'otter fan', memory_count: 3,
    counts: { episodic: 0, semantic: 3, procedural: 0 }, vectors: item.vectors, problem: null,
  });
  const captured = listed.body.snapshots.map((s: { captured_at: string }) => s.captured_at);
  assert.deepEqual(captured, [...captured].sort(), 'oldest first');

  const client = new MemoryClient({ baseUrl: t.base });
  assert.deepEqual((await client.listSnapshots()).snapshots, listed.body.snapshots);
  const first = await client.restoreSnapshot({ snapshot_id: snapshotId });
  assert.deepEqual([first.restored_count, first.already_present_count], [3, 0]);
  const stats = (await get(t.base, '/v1/stats')).body;
  const second = await restore(snapshotId);
  assert.deepEqual([second.status, second.body.restored_count, second.body.already_present_count], [200, 0, 3]);
  assert.deepEqual((await get(t.base, '/v1/stats')).body, stats);
  assert.equal((await post(t.base, '/v1/inspect', { entity: 'otter fan' })).body.semantic.length, 3);
  // The id in upper case is the same UUID (the route's pattern takes either case).
  const upper = await restore(snapshotId.toUpperCase());
  assert.deepEqual([upper.status, upper.body.snapshot_id, upper.body.already_present_count], [200, snapshotId, 3]);
});

test('an unknown snapshot id is 404; a malformed one is 400 naming snapshot_id', async () => {
  const unknown = await restore(randomUUID());
  assert.deepEqual([unknown.status, unknown.body.code], [404, 'SNAPSHOT_NOT_FOUND']);
  for (const bad of ['not-a-uuid', '..%2F..%2Fmemory', '12345678-1234-1234-1234-1234567890ab0', '%20']) {
    const r = await restore(bad);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.code, 'INVALID_VALUE');
    assert.match(r.body.error, /snapshot_id/);
  }
});

test('a damaged or foreign snapshot is refused with 409 and changes nothing; no server path is revealed', async () => {
  await rememberMany(t.base, 'heron watcher', 2, 'heron sighting');
  const snapshotId = await deleteEntity('heron watcher');
  const path = join(t.dir, 'snapshots', `${snapshotId}.json`);
  const good = JSON.parse(readFileSync(path, 'utf8'));

  const foreignId = randomUUID();
  writeFileSync(join(t.dir, 'snapshots', `${foreignId}.json`), JSON.stringify({ ...good, snapshot_id: foreignId, namespace: 'elsewhere' }));
  const foreign = await restore(foreignId);
  assert.deepEqual([foreign.status, foreign.body.code], [409, 'SNAPSHOT_CONFLICT']);

  const damagedId = randomUUID();
  writeFileSync(join(t.dir, 'snapshots', `${damagedId}.json`), '{"format_version": 1, "memo');
  const damaged = await restore(damagedId);
  assert.deepEqual([damaged.status, damaged.body.code], [409, 'SNAPSHOT_UNUSABLE']);
  assert.ok(!damaged.body.error.includes(t.dir));
  const listed = (await get(t.base, '/v1/snapshots')).body.snapshots.find((s: { snapshot_id: string }) => s.snapshot_id === damagedId);
  assert.equal(typeof listed.problem, 'string');
  assert.ok(!listed.problem.includes(t.dir));

  assert.equal((await post(t.base, '/v1/inspect', { entity: 'heron watcher' })).status, 404);
  assert.equal((await restore(snapshotId)).body.restored_count, 2);
});

test('a snapshot written before the line framing (one line, no summary) still restores online; a damaged line changes nothing', async () => {
  await rememberMany(t.base, 'kestrel spotter', 30, 'kestrel hover');
  const snapshotId = await deleteEntity('kestrel spotter');
  const path = join(t.dir, 'snapshots', `${snapshotId}.json`);
  const text = readFileSync(path, 'utf8');
  // A memory line damaged near the end: the check reads every line before anything is written.
  writeFileSync(path, text.replace(/\n,\{"rowid":[^\n]*\n\],"summary"/, '\n,{"rowid":\n],"summary"'));
  const damaged = await restore(snapshotId);
  assert.deepEqual([damaged.status, damaged.body.code], [409, 'SNAPSHOT_UNUSABLE']);
  assert.equal((await post(t.base, '/v1/inspect', { entity: 'kestrel spotter' })).status, 404, 'nothing restored, not even the entity');
  // The listing reads only the header and summary lines; once a restore found the damage, it shows it too.
  const refused = (await get(t.base, '/v1/snapshots')).body.snapshots.find((s: { snapshot_id: string }) => s.snapshot_id === snapshotId);
  assert.equal(typeof refused.problem, 'string');
  assert.ok(!refused.problem.includes(t.dir));

  const { summary: _summary, ...document } = JSON.parse(text);
  writeFileSync(path, JSON.stringify(document));
  const listed = (await get(t.base, '/v1/snapshots')).body.snapshots.find((s: { snapshot_id: string }) => s.snapshot_id === snapshotId);
  assert.deepEqual([listed.memory_count, listed.problem], [30, null]);
  const r = await restore(snapshotId);
  assert.deepEqual([r.status, r.body.restored_count, r.body.already_present_count], [200, 30, 0]);
  assert.equal((await post(t.base, '/v1/inspect', { entity: 'kestrel spotter' })).body.semantic.length, 30);
});

test('the CLI restore goes through the running service (which holds the lock), with its key', async () => {
  const keyed = await startTestService({ SERVICE_API_KEYS: 'k1,k2', SERVICE_EMBEDDER: 'hash' });
  try {
    const auth = { authorization: 'Bearer k2' };
    await post(keyed.base, '/v1/remember', { entity: 'puffin', fact: 'puffins nest in burrows' }, auth);
    const snapshotId = (await del(keyed.base, '/v1/entities/puffin', auth)).body.snapshot.snapshot_id;
    const db = join(keyed.dir, 'memory.db');
    // The key comes from SERVICE_API_KEYS, as the service reads it.
    const first = await runCli(['restore', snapshotId, '--db', db, '--url', keyed.base], { env: { SERVICE_API_KEYS: 'k1,k2' } });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^restored 1 memories .*through the running service/);
    assert.equal((await post(keyed.base, '/v1/recall', { query: 'puffins burrows' }, auth)).body.memories.length, 1);
    const again = await runCli(['restore', snapshotId, '--db', db], { env: { MEMORY_RUNTIME_URL: keyed.base, MEMORY_RUNTIME_API_KEY: 'k1' } });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^nothing to restore/);
    const wrongKey = await runCli(['restore', snapshotId, '--db', db, '--url', keyed.base, '--api-key', 'nope']);
    assert.equal(wrongKey.code, 1);
    assert.match(wrongKey.stderr, /^memory-runtime: .*HTTP 401/);
    const unknown = await runCli(['restore', randomUUID(), '--db', db, '--url', keyed.base, '--api-key', 'k1']);
    assert.match(unknown.stderr, /HTTP 404 SNAPSHOT_NOT_FOUND/);
  } finally {
    await keyed.close();
  }
});

test('the CLI restore finds the service by the URL it wrote into the lock (PORT=0 here); any other lock holder is "in use"', async () => {
  await rememberMany(t.base, 'lapwing', 2, 'lapwing call');
  const snapshotId = await deleteEntity('lapwing');
  const db = join(t.dir, 'memory.db');
  assert.equal(JSON.parse(readFileSync(holderPathFor(db), 'utf8')).url, t.base, 'the service recorded where it listens');
  // No --url, no MEMORY_RUNTIME_URL, and HOST/PORT pointing nowhere: the lock's URL is used.
  const r = await runCli(['restore', snapshotId, '--db', db], { env: { HOST: '127.0.0.1', PORT: '1' } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^restored 2 memories .*through the running service/);

  // A holder that is not a serving service (an import, say): no online restore, even with a URL given.
  const other = tempDir('memrt-import-holder-');
  const otherDb = join(other, 'memory.db');
  prepareVectorDatabase(otherDb);
  const lock = acquireLock(otherDb, 'memory-runtime import');
  try {
    const refused = await runCli(['restore', snapshotId, '--db', otherDb, '--url', t.base]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /in use.*memory-runtime import/);
  } finally {
    lock.release();
  }
  // A service that records no URL (an earlier version, during an upgrade): reached with --url only.
  await rememberMany(t.base, 'lapwing', 1, 'lapwing flight');
  const again = await deleteEntity('lapwing');
  const older = acquireLock(otherDb, 'memory-runtime service');
  try {
    const unknown = await runCli(['restore', again, '--db', otherDb], { env: { HOST: '127.0.0.1', PORT: '1' } });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /in use/);
    const through = await runCli(['restore', again, '--db', otherDb, '--url', t.base]);
    assert.equal(through.code, 0, through.stderr);
    assert.match(through.stdout, /^restored 3 memories .*through the running service/);
  } finally {
    older.release();
  }
});

test('the new routes need a key when keys are set', async () => {
  const keyed = await startTestService({ SERVICE_API_KEYS: 'k1', SERVICE_EMBEDDER: 'hash' });
  try {
    const auth = { authorization: 'Bearer k1' };
    const wrong = { authorization: 'Bearer nope' };
    const id = randomUUID();
    for (const headers of [{}, wrong]) {
      assert.equal((await get(keyed.base, '/v1/snapshots', headers)).status, 401);
      assert.equal((await post(keyed.base, `/v1/snapshots/${id}/restore`, undefined, headers)).status, 401);
      assert.equal((await get(keyed.base, '/v1/entities?q=a', headers)).status, 401);
    }
    assert.equal((await get(keyed.base, '/v1/snapshots', auth)).status, 200);
    assert.equal((await post(keyed.base, `/v1/snapshots/${id}/restore`, undefined, auth)).status, 404);
    assert.equal((await get(keyed.base, '/v1/entities?q=a', auth)).status, 200);
  } finally {
    await keyed.close();
  }
});
