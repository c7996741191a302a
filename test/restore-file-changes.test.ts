// An online restore reads the snapshot file it checked, whatever happens to its name meanwhile
// (review of issue 15: a file removed while it streamed answered 404 with 1,000 of 20,000
// memories restored; one touched answered 409 SNAPSHOT_UNUSABLE, "nothing was restored", with
// part of it restored). The file is opened once for the whole restore; a failure after the first
// chunk committed is 409 RESTORE_INTERRUPTED, and repeating the restore finishes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, rmSync, statSync, truncateSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { VECTOR_ENV } from './support/cli.js';
import { seedEntity } from './support/seed.js';
import { del, get, post, startTestService, tempDir, type Reply } from './support/service.js';

const TOTAL = 4_000;

test('removing, touching or truncating the snapshot file during an online restore', async () => {
  const dir = tempDir('memrt-restore-file-');
  const db = join(dir, 'memory.db');
  seedEntity(db, 'big', TOTAL, { vectors: false });
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  const count = async (): Promise<number> => (await get(t.base, '/v1/stats')).body.semantic_memories;
  /** Deletes `big`, starts restoring its snapshot, does `change` to the file once the first chunk committed. */
  const restoreWhile = async (change: (file: string) => void): Promise<{ reply: Reply; file: string; snapshotId: string }> => {
    const deleted = await del(t.base, '/v1/entities/big');
    assert.equal(deleted.body.forgotten_count, TOTAL);
    const snapshotId: string = deleted.body.snapshot.snapshot_id;
    const file = join(dir, 'snapshots', `${snapshotId}.json`);
    let done = false;
    const restoring = post(t.base, `/v1/snapshots/${snapshotId}/restore`).then((r) => ((done = true), r));
    while ((await count()) === 0) await new Promise((r) => setTimeout(r, 2));
    change(file);
    assert.ok(!done, 'the restore was still running when the file changed (raise TOTAL if this machine is fast)');
    return { reply: await restoring, file, snapshotId };
  };
  try {
    const removed = await restoreWhile((file) => rmSync(file));
    assert.deepEqual([removed.reply.status, removed.reply.body.restored_count], [200, TOTAL]);
    assert.equal(await count(), TOTAL);

    const touched = await restoreWhile((file) => utimesSync(file, new Date(), new Date(Date.now() + 5_000)));
    assert.deepEqual([touched.reply.status, touched.reply.body.restored_count], [200, TOTAL]);
    assert.equal(await count(), TOTAL);

    // Cut short in place (the one change its descriptor sees): part is back, and the answer says so.
    const keep = join(dir, 'kept.json');
    const cut = await restoreWhile((file) => {
      copyFileSync(file, keep);
      truncateSync(file, Math.floor(statSync(file).size / 2));
    });
    assert.equal(cut.reply.status, 409);
    assert.equal(cut.reply.body.code, 'RESTORE_INTERRUPTED');
    const partial = await count();
    assert.ok(partial > 0 && partial < TOTAL, `part of the snapshot was restored (${partial})`);
    // The whole file back: repeating the restore finishes it.
    copyFileSync(keep, cut.file);
    const repeated = await post(t.base, `/v1/snapshots/${cut.snapshotId}/restore`);
    assert.deepEqual([repeated.status, repeated.body.restored_count + repeated.body.already_present_count], [200, TOTAL]);
    assert.equal(await count(), TOTAL);
  } finally {
    await t.close();
  }
});
