// A delete and a restore never overlap (review of issue 15: a DELETE sent while a restore of
// that entity was running answered 200, and 17,644 of 20,000 memories came back; a DELETE of Y
// during a restore of X's snapshot, whose memories Y took part in, left 9,852 of them linked to
// Y; a DELETE sent after a restore that still waited in the restore queue ran first and the
// restore brought everything back). The later one waits for the earlier and runs whole, in the
// order they arrived.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { VECTOR_ENV } from './support/cli.js';
import { seedEntity } from './support/seed.js';
import { del, get, post, startTestService, tempDir, type Reply } from './support/service.js';

const TOTAL = 4_000;

const semanticCount = async (base: string): Promise<number> => (await get(base, '/v1/stats')).body.semantic_memories;

/** Resolves once `count()` says the first operation has visibly begun (and not yet ended). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

/** The reply, with a flag saying whether it has arrived. */
function tracked(request: Promise<Reply>): { done: () => boolean; reply: Promise<Reply> } {
  let done = false;
  const reply = request.then((r) => {
    done = true;
    return r;
  });
  return { done: () => done, reply };
}

test('delete during a restore, and restore during a delete, of a large entity: the later one wins whole', async () => {
  const dir = tempDir('memrt-exclusion-');
  const db = join(dir, 'memory.db');
  seedEntity(db, 'big', TOTAL, { vectors: false });
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  try {
    const first = await del(t.base, '/v1/entities/big');
    assert.equal(first.status, 200);
    const snapshotId: string = first.body.snapshot.snapshot_id;
    assert.equal(await semanticCount(t.base), 0);

    // DELETEs arriving while the restore runs wait for it (4 may wait; the 5th is refused), then
    // the first deletes everything.
    const restoring = tracked(post(t.base, `/v1/snapshots/${snapshotId}/restore`));
    await until(async () => (await semanticCount(t.base)) > 0);
    assert.ok(!restoring.done(), 'the restore was still running when the DELETE was sent (raise TOTAL if this machine is fast)');
    const deletes = await Promise.all([restoring.reply, ...Array.from({ length: 5 }, () => del(t.base, '/v1/entities/big'))]);
    const [restored, ...deleted] = deletes;
    assert.deepEqual([restored.status, restored.body.restored_count], [200, TOTAL]);
    // The first deletes everything, the entity too: the three behind it find no entity (404).
    assert.deepEqual(deleted.map((r) => r.status).sort(), [200, 404, 404, 404, 409]);
    assert.equal(deleted.find((r) => r.status === 409)!.body.code, 'ENTITY_BUSY');
    assert.deepEqual(deleted.filter((r) => r.status === 200).map((r) => r.body.forgotten_count), [TOTAL]);
    assert.equal(await semanticCount(t.base), 0, 'nothing the restore brought back outlived the later DELETE');

    // A restore arriving while a DELETE runs waits for it, then brings everything back.
    assert.equal((await post(t.base, `/v1/snapshots/${snapshotId}/restore`)).body.restored_count, TOTAL);
    const deleting2 = tracked(del(t.base, '/v1/entities/big'));
    await until(async () => (await semanticCount(t.base)) < TOTAL);
    assert.ok(!deleting2.done(), 'the DELETE was still running when the restore was sent');
    const restoring2 = post(t.base, `/v1/snapshots/${snapshotId}/restore`);
    const [deleted2, restored2] = await Promise.all([deleting2.reply, restoring2]);
    assert.deepEqual([deleted2.status, deleted2.body.forgotten_count], [200, TOTAL]);
    assert.deepEqual([restored2.status, restored2.body.restored_count, restored2.body.already_present_count], [200, TOTAL, 0]);
    assert.equal(await semanticCount(t.base), TOTAL, 'the later restore brought back every memory');
  } finally {
    await t.close();
  }
});

test('one restore runs at a time: 4 more wait, the next is refused with 409 RESTORE_BUSY', async () => {
  const dir = tempDir('memrt-restore-turns-');
  const db = join(dir, 'memory.db');
  seedEntity(db, 'many', TOTAL, { vectors: false });
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  try {
    const snapshotId: string = (await del(t.base, '/v1/entities/many')).body.snapshot.snapshot_id;
    const first = tracked(post(t.base, `/v1/snapshots/${snapshotId}/restore`));
    await until(async () => (await semanticCount(t.base)) > 0);
    assert.ok(!first.done(), 'the first restore was still running (raise TOTAL if this machine is fast)');
    const others = await Promise.all(Array.from({ length: 5 }, () => post(t.base, `/v1/snapshots/${snapshotId}/restore`)));
    assert.deepEqual([(await first.reply).status, (await first.reply).body.restored_count], [200, TOTAL]);
    assert.deepEqual(others.map((r) => r.status).sort(), [200, 200, 200, 200, 409]);
    assert.equal(others.find((r) => r.status === 409)!.body.code, 'RESTORE_BUSY');
    for (const r of others.filter((r) => r.status === 200)) assert.deepEqual([r.body.restored_count, r.body.already_present_count], [0, TOTAL]);
  } finally {
    await t.close();
  }
});

/** The entity's memory count in the entity list; undefined once the entity itself is gone. */
const memoryCount = async (base: string, name: string): Promise<number | undefined> =>
  (await get(base, `/v1/entities?q=${name}`)).body.entities.find((e: { name: string }) => e.name === name)?.memory_count;

test('a DELETE of an entity that took part in the memories a restore brings back waits for the restore', async () => {
  const dir = tempDir('memrt-exclusion-participant-');
  const db = join(dir, 'memory.db');
  seedEntity(db, 'xavier', TOTAL, { vectors: false, participant: 'yolanda' });
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  try {
    const snapshotId: string = (await del(t.base, '/v1/entities/xavier')).body.snapshot.snapshot_id;
    assert.equal(await memoryCount(t.base, 'yolanda'), 0);
    const restoring = tracked(post(t.base, `/v1/snapshots/${snapshotId}/restore`));
    await until(async () => (await semanticCount(t.base)) > 0);
    assert.ok(!restoring.done(), 'the restore was still running when the DELETE was sent (raise TOTAL if this machine is fast)');
    const deleted = await del(t.base, '/v1/entities/yolanda');
    assert.deepEqual([(await restoring.reply).status, (await restoring.reply).body.restored_count], [200, TOTAL]);
    assert.deepEqual([deleted.status, deleted.body.forgotten_count], [200, TOTAL]);
    assert.equal(await memoryCount(t.base, 'yolanda'), undefined, 'nothing yolanda took part in outlived her DELETE (nor did she)');
  } finally {
    await t.close();
  }
});

test('a DELETE sent after a restore that still waits in the restore queue runs after it', async () => {
  const dir = tempDir('memrt-exclusion-queued-');
  const db = join(dir, 'memory.db');
  seedEntity(db, 'big', TOTAL, { vectors: false });
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  try {
    for (let i = 0; i < 3; i++) assert.equal((await post(t.base, '/v1/remember', { entity: 'xena', fact: `xena fact ${i}` })).status, 201);
    const bigSnapshot: string = (await del(t.base, '/v1/entities/big')).body.snapshot.snapshot_id;
    const xenaSnapshot: string = (await del(t.base, '/v1/entities/xena')).body.snapshot.snapshot_id;
    const big = tracked(post(t.base, `/v1/snapshots/${bigSnapshot}/restore`));
    await until(async () => (await semanticCount(t.base)) > 0);
    const xena = tracked(post(t.base, `/v1/snapshots/${xenaSnapshot}/restore`));
    // The restore of xena has arrived (a status answer comes after it on the same event loop).
    await get(t.base, '/v1/health');
    assert.ok(!big.done(), 'the first restore was still running when the DELETE was sent (raise TOTAL if this machine is fast)');
    const deleted = await del(t.base, '/v1/entities/xena');
    assert.ok(xena.done(), 'the DELETE answered after the restore sent before it');
    assert.deepEqual([(await xena.reply).status, (await xena.reply).body.restored_count], [200, 3]);
    assert.deepEqual([deleted.status, deleted.body.forgotten_count], [200, 3]);
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'xena' })).status, 404);
    assert.equal((await big.reply).status, 200);
  } finally {
    await t.close();
  }
});
