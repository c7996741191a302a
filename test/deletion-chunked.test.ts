// Deleting a large entity: the snapshot is written from a read snapshot in the pool and the
// rows are deleted in short writer commands, so other writes commit while it runs; a crash
// between two commands leaves rows deleted that the fsynced snapshot holds, and restoring it
// brings the entity back whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { dump, runCli, VECTOR_ENV } from './support/cli.js';
import { seedEntity } from './support/seed.js';
import { del, get, post, startTestService, tempDir } from './support/service.js';
import { exited, spawnService } from './support/process.js';

test('a large delete runs as many writer commands, and other writes commit while it runs', async () => {
  const dir = tempDir('memrt-chunked-');
  const db = join(dir, 'memory.db');
  seedEntity(db, 'large', 5_000);
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  try {
    const commandsBefore = t.service.writer.stats.commands;
    let deleted = false;
    const deletion = del(t.base, '/v1/entities/large').then((r) => {
      deleted = true;
      return r;
    });
    const acknowledgedDuring: number[] = [];
    let written = 0;
    for (let i = 0; !deleted && i < 10_000; i++) {
      const r = await post(t.base, '/v1/remember', { entity: 'bystander', fact: `written during the delete ${i}` });
      assert.equal(r.status, 201);
      written++;
      if (!deleted) acknowledgedDuring.push(i);
    }
    const r = await deletion;
    assert.equal(r.status, 200);
    assert.equal(r.body.forgotten_count, 5_000);
    assert.equal(r.body.snapshot.memory_count, 5_000);
    // Held in one transaction (as before), the delete would have been answered before any of them.
    assert.ok(acknowledgedDuring.length > 1, 'writes sent after the DELETE were acknowledged before it finished');
    assert.ok(t.service.writer.stats.commands - commandsBefore >= written + 2, 'the delete ran as several writer commands');
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'large' })).status, 404);
    // Every acknowledged write is there; none was caught up in the delete.
    assert.equal((await get(t.base, '/v1/stats')).body.semantic_memories, written);
  } finally {
    await t.close();
  }
});

test('kill -9 in the middle of a large delete: the snapshot restores the entity whole', async () => {
  const dir = tempDir('memrt-chunked-crash-');
  const db = join(dir, 'memory.db');
  const total = 20_000;
  seedEntity(db, 'doomed', total);
  const before = dump(db);
  // 20k vectors reach the IVF threshold: on a loaded machine the index upkeep could move rows
  // into cells before the delete reads its snapshot, and `before` would no longer be the truth.
  const service = await spawnService({ SERVICE_PATH: db, ...VECTOR_ENV, SERVICE_VECTOR_INDEX_MIN: String(total + 1) });
  try {
    void fetch(`${service.base}/v1/entities/doomed`, { method: 'DELETE' }).catch(() => {});
    // Kill once some rows are gone but not all of them.
    for (;;) {
      const left = (await get(service.base, '/v1/stats')).body.semantic_memories as number;
      if (left < total) {
        assert.ok(left > 0, 'the delete had not finished yet (raise `total` if this machine is fast)');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    service.child.kill('SIGKILL');
    await exited(service.child);
  } finally {
    service.child.kill('SIGKILL');
  }
  const snapshots = readdirSync(join(dir, 'snapshots'));
  assert.equal(snapshots.length, 1);
  const restore = await runCli(['restore', snapshots[0]!.replace(/\.json$/, ''), '--db', db]);
  assert.equal(restore.code, 0, restore.stderr);
  const after = dump(db) as { memories: unknown[]; links: unknown[]; vectors: unknown[] };
  const was = before as typeof after;
  assert.equal(after.memories.length, total);
  assert.deepEqual(after.memories, was.memories);
  assert.deepEqual(after.links, was.links);
  assert.deepEqual(after.vectors, was.vectors);
});

test('a memory written to the entity after its snapshot was read is kept; the snapshot\'s rows are all deleted', async () => {
  const dir = tempDir('memrt-chunked-late-');
  const db = join(dir, 'memory.db');
  const total = 20_000;
  seedEntity(db, 'busy', total);
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  try {
    let finished = false;
    const deletion = del(t.base, '/v1/entities/busy').finally(() => (finished = true));
    // Rows start to go only once the snapshot is fsynced: from then on, a new write is "after".
    while ((await get(t.base, '/v1/stats')).body.semantic_memories === total) await new Promise((resolve) => setTimeout(resolve, 5));
    const late = await post(t.base, '/v1/remember', { entity: 'busy', fact: 'written while the delete ran' });
    assert.equal(late.status, 201);
    assert.equal(finished, false, 'the late write was acknowledged while the delete ran');
    const r = await deletion;
    assert.equal(r.status, 200);
    assert.equal(r.body.snapshot.memory_count, total);
    assert.equal(r.body.forgotten_count, total);
    const left = (await post(t.base, '/v1/inspect', { entity: 'busy' })).body.semantic;
    assert.deepEqual(left.map((m: { id: string }) => m.id), [late.body.id]);
    // Deleting again removes it, with its own snapshot.
    const again = await del(t.base, '/v1/entities/busy');
    assert.equal(again.body.forgotten_count, 1);
  } finally {
    await t.close();
  }
});
