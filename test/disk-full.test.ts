// A full disk, for real: the service runs on a 16 MiB tmpfs mounted in its own mount namespace
// (`unshare -m`, so the mount vanishes with the process whatever happens to this test), and
// the test fills that file system through /proc/<pid>/root. A write that finds no space must
// answer 507 STORAGE_FULL with Retry-After — not 500 INTERNAL — lose nothing acknowledged
// before, and work again once space is freed. Faking SQLITE_FULL (a page limit set through a
// test-only hook) would test a path production never takes; the writer-batch unit test covers
// the rollback mechanics on its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { del, get, post, tempDir } from './support/service.js';
import { exited, spawnService } from './support/process.js';
import { VECTOR_ENV } from './support/cli.js';

const MOUNT = 'mount -t tmpfs -o size=16m tmpfs "$0" && exec "$@"';
const probeDir = tempDir('memrt-mount-probe-');
const mountWorks = spawnSync('unshare', ['-m', 'sh', '-c', MOUNT, probeDir, 'true']).status === 0;

/** Writes until the file system refuses (ENOSPC), so the next allocation anywhere on it fails. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

test('disk full: writes answer 507 STORAGE_FULL with Retry-After, the delete is refused, and all works again once space is freed', {
  skip: mountWorks ? false : 'mounting a tmpfs in a private mount namespace (unshare -m) is not permitted here (needs root)',
}, async () => {
  const dir = tempDir('memrt-full-');
  const service = await spawnService({ SERVICE_PATH: `${dir}/memory.db`, ...VECTOR_ENV }, ['unshare', '-m', 'sh', '-c', MOUNT, dir]);
  const filler = `/proc/${service.child.pid}/root${dir}/filler`;
  try {
    const acked: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await post(service.base, '/v1/remember', { entity: 'full-user', fact: `stored before the disk filled ${i}` });
      assert.equal(r.status, 201);
      acked.push(r.body.id);
    }
    fill(filler);

    // Writes may still fit in space SQLite already holds (the WAL); keep writing until one does not.
    const statuses: number[] = [];
    let refused = null;
    for (let i = 0; i < 300 && !refused; i++) {
      const r = await post(service.base, '/v1/remember', { entity: 'other-user', fact: `${i} ${'x'.repeat(90_000)}` });
      statuses.push(r.status);
      if (r.status !== 201) refused = r;
    }
    assert.ok(refused, 'a write was refused once the disk was full');
    assert.equal(refused.status, 507, `statuses: ${statuses.join(',')}`);
    assert.equal(refused.body.code, 'STORAGE_FULL');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.ok(!JSON.stringify(refused.body).includes(dir), 'no server path in the body');

    // The snapshot cannot be written: the delete is refused and nothing is removed.
    const deletion = await del(service.base, '/v1/entities/full-user');
    assert.equal(deletion.status, 507);
    assert.equal(deletion.body.code, 'STORAGE_FULL');
    assert.ok(!JSON.stringify(deletion.body).includes(dir), 'no server path in the body');
    assert.equal((await get(service.base, '/v1/health')).status, 200);

    unlinkSync(filler);
    assert.equal((await post(service.base, '/v1/remember', { entity: 'full-user', fact: 'stored after space was freed' })).status, 201);
    const inspect = await post(service.base, '/v1/inspect', { entity: 'full-user', limit: 100 });
    const ids = new Set(inspect.body.semantic.map((m: { id: string }) => m.id));
    for (const id of acked) assert.ok(ids.has(id), `acknowledged ${id} is intact`);
    assert.equal(ids.size, acked.length + 1);
    const forgotten = await del(service.base, '/v1/entities/full-user');
    assert.equal(forgotten.status, 200);
    assert.equal(forgotten.body.forgotten_count, acked.length + 1);
  } finally {
    service.child.kill('SIGKILL');
    await exited(service.child);
  }
});
