// The instance lock is the kernel's (an fcntl lock SQLite holds on <db>.lock), so it dies with
// its process however that process ends. These tests kill holders with SIGKILL, including a
// service running as pid 1 in its own pid namespace — the container case, where a restarted
// service has the same pid and hostname as the one that was killed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VECTOR_ENV } from './support/cli.js';
import { get, post, startTestService, tempDir } from './support/service.js';
import { exited, spawnService } from './support/process.js';
import { acquireLock, holderPathFor, LockHeldError, lockHolder, lockPathFor } from '../src/shared/instance-lock.js';

const LOCK_MODULE = fileURLToPath(new URL('../src/shared/instance-lock.js', import.meta.url));

/** A separate process that takes the lock and keeps it until killed. */
async function holderProcess(db: string) {
  const script = `const m = await import(${JSON.stringify(LOCK_MODULE)}); m.acquireLock(${JSON.stringify(db)}, 'test holder');` +
    `console.log('held'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
  });
  return child;
}

test('a live holder keeps the service out; once it is killed with SIGKILL the lock is free at once', async () => {
  const dir = tempDir('memrt-lock-');
  const db = join(dir, 'memory.db');
  const holder = await holderProcess(db);
  await assert.rejects(startTestService({ SERVICE_PATH: db, ...VECTOR_ENV }), (error: unknown) => {
    assert.ok(error instanceof LockHeldError);
    assert.equal(error.holder.pid, holder.pid);
    return true;
  });
  assert.equal(lockHolder(db)?.pid, holder.pid);
  holder.kill('SIGKILL');
  await exited(holder);
  assert.equal(lockHolder(db), null);
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  try {
    // Held by this process now: a second taker in the same process is refused too.
    assert.throws(() => acquireLock(db, 'second'), LockHeldError);
  } finally {
    await t.close();
  }
  acquireLock(db, 'after close').release();
});

test('a holder killed but not yet reaped (a zombie) holds nothing', async () => {
  const dir = tempDir('memrt-lock-');
  const db = join(dir, 'memory.db');
  // `exec sleep` replaces the shell, so nobody reaps the holder once it dies: it stays a zombie.
  const script = `const m = await import(${JSON.stringify(LOCK_MODULE)}); m.acquireLock(${JSON.stringify(db)}, 'zombie to be');` +
    `console.log('held'); setInterval(() => {}, 1000);`;
  const parent = spawn('sh', ['-c', 'node --input-type=module -e "$0" & echo "pid $!"; exec sleep 60', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    let output = '';
    await new Promise<void>((resolve) => parent.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.includes('held')) resolve();
    }));
    const holder = Number(/pid (\d+)/.exec(output)![1]);
    assert.throws(() => acquireLock(db, 'too early'), LockHeldError);
    process.kill(holder, 'SIGKILL');
    while (!/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${holder}/stat`, 'utf8'))) await new Promise((resolve) => setTimeout(resolve, 10));
    // The leader shows Z while its other threads may still be exiting; the kernel frees the
    // lock when the last one has gone, so allow it a moment.
    let lock = null;
    for (let i = 0; i < 500 && !lock; i++) {
      try {
        lock = acquireLock(db, 'after the zombie');
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    assert.ok(lock, 'the lock is free');
    // The pid still exists (kill(pid, 0) succeeds on a zombie: what the pid-file lock trusted).
    assert.match(readFileSync(`/proc/${holder}/stat`, 'utf8'), /^\d+ \(.*\) Z/);
    process.kill(holder, 0);
    lock.release();
  } finally {
    parent.kill('SIGKILL');
    await exited(parent);
  }
});

test('a pid-file lock left by an earlier version naming this process (a container restart as the same pid) is replaced', async () => {
  const dir = tempDir('memrt-lock-');
  const db = join(dir, 'memory.db');
  writeFileSync(lockPathFor(db), JSON.stringify({ pid: process.pid, host: hostname(), owner: 'memory-runtime import', since: 'now' }));
  const lock = acquireLock(db, 'upgraded');
  assert.equal(JSON.parse(readFileSync(holderPathFor(db), 'utf8')).owner, 'upgraded');
  lock.release();
});

test('a pid-file lock of an earlier version still running (another live pid on this host) is not taken over', async () => {
  const dir = tempDir('memrt-lock-');
  const db = join(dir, 'memory.db');
  const old = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    writeFileSync(lockPathFor(db), JSON.stringify({ pid: old.pid, host: hostname(), owner: 'memory-runtime service', since: 'now' }));
    assert.throws(() => acquireLock(db, 'upgraded too early'), (error: unknown) => {
      assert.ok(error instanceof LockHeldError);
      assert.equal(error.holder.pid, old.pid);
      return true;
    });
    old.kill('SIGKILL');
    await exited(old);
    acquireLock(db, 'upgraded').release();
  } finally {
    old.kill('SIGKILL');
  }
});

const UNSHARE = ['unshare', '-fp', '--mount-proc'];
const unshareWorks = spawnSync(UNSHARE[0]!, [...UNSHARE.slice(1), 'true']).status === 0;

test('as pid 1 in its own pid namespace, the service restarts on the same file after kill -9', {
  skip: unshareWorks ? false : 'unshare -fp --mount-proc is not permitted here (needs root or user namespaces)',
}, async () => {
  const dir = tempDir('memrt-pid1-');
  const db = join(dir, 'memory.db');
  const env = { SERVICE_PATH: db, ...VECTOR_ENV };
  for (let run = 1; run <= 3; run++) {
    const service = await spawnService(env, UNSHARE);
    try {
      // The holder record shows the service really is pid 1: the case pid-file locks got wrong.
      assert.equal(JSON.parse(readFileSync(holderPathFor(db), 'utf8')).pid, 1);
      assert.equal((await post(service.base, '/v1/remember', { entity: 'pid1', fact: `fact from run ${run}` })).status, 201);
      assert.equal((await get(service.base, '/v1/stats')).body.semantic_memories, run);
      // kill -9 the namespace's init (the service), not the unshare parent.
      const inner = Number(readFileSync(`/proc/${service.child.pid}/task/${service.child.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
      process.kill(inner, 'SIGKILL');
      await exited(service.child);
    } finally {
      service.child.kill('SIGKILL');
    }
  }
});
