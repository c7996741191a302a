// SERVICE_API_KEYS_FILE and `memory-runtime keys` (issue 25): keys minted by the CLI work at once
// (bound to their namespace, with their own rate), a revoked key is refused once the service has
// re-read the file — under 32 concurrent clients, with no 5xx and no request started after the
// reload served under the revoked key — a malformed line is skipped with its line number, SIGHUP
// re-reads, and an unreadable file stops the start naming the variable.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { loadConfig } from '../src/shared/config.js';
import { createLogger } from '../src/shared/logger.js';
import { startService } from '../src/service.js';
import { parseKeysFile } from '../src/shared/api-keys-file.js';
import { keyDigest } from '../src/http/auth.js';
import { RateLimiter } from '../src/http/rate-limit.js';
import { call, startTestService, tempDir, type TestService } from './support/service.js';
import { runCli } from './support/cli.js';

const bearer = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...extra });

/** Waits (bounded) until `check` holds; the bound only keeps a broken run from hanging. */
async function until(check: () => boolean | Promise<boolean>, what: string, boundMs = 20_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('the file format: good lines load, each bad one is reported with its line number', () => {
  const good = keyDigest('k1');
  const { keys, problems } = parseKeysFile([
    '# operator keys first', `${keyDigest('op')} *`, 'not-a-digest tenant-a', '', `${good} tenant-a 120`,
    `${keyDigest('k2')} tenant-b 0`, `${keyDigest('k3')}`, `${keyDigest('k4')} tenant-c 10 extra`,
  ].join('\n'));
  assert.deepEqual(keys, [
    { digest: keyDigest('op'), namespace: null, perMinute: null },
    { digest: good, namespace: 'tenant-a', perMinute: 120 },
  ]);
  assert.deepEqual(problems.map((p) => p.line), [3, 6, 7, 8]);
});

test('an unreadable keys file at start is a configuration error naming the variable', async () => {
  const dir = tempDir();
  const config = loadConfig({ SERVICE_PATH: join(dir, 'memory.db'), SERVICE_API_KEYS_FILE: join(dir, 'missing-keys'), PORT: '0', HOST: '127.0.0.1' });
  await assert.rejects(startService(config, createLogger('silent')), /SERVICE_API_KEYS_FILE/);
});

test('a key\'s own rate applies with SERVICE_RATE_LIMIT=0 (no default limit)', () => {
  const limiter = new RateLimiter(0);
  try {
    const decisions = Array.from({ length: 3 }, () => limiter.take('key:k', 2).allowed);
    assert.deepEqual(decisions, [true, true, false]);
    assert.equal(limiter.take('key:other').allowed, true, 'no rate of its own: unlimited');
  } finally {
    limiter.close();
  }
});

test('keys add refuses a namespace the file could not hold (whitespace would split it into namespace and rate)', async () => {
  const file = join(tempDir(), 'api-keys');
  const added = await runCli(['keys', 'add', '--namespace', 'acme 60', '--file', file]);
  assert.notEqual(added.code, 0);
  assert.match(added.stderr, /whitespace/);
  assert.equal(added.stdout, '', 'no key printed');
});

describe('a service on a keys file', () => {
  let t: TestService;
  let file: string;
  let keyA = '';
  let keyOp = '';
  before(async () => {
    const dir = tempDir();
    file = join(dir, 'api-keys');
    const cli = (args: string[]) => runCli(['keys', ...args, '--file', file]);
    const added = await cli(['add', '--namespace', 'tenant-a']);
    assert.equal(added.code, 0, added.stderr);
    keyA = added.stdout.trim();
    keyOp = (await cli(['add', '--namespace', '*'])).stdout.trim();
    // The revoked key's 401s come from the same address as every other client's requests: the
    // failed-authentication limiter (per address) would refuse them all, which is not under test here.
    t = await startTestService({ SERVICE_API_KEYS_FILE: file, SERVICE_EMBEDDER: 'hash', SERVICE_RATE_LIMIT: '100000', SERVICE_AUTH_FAILURE_LIMIT: '100000' });
  });
  after(() => t?.close());

  test('a minted key acts on its namespace only; the file holds digests, never keys', async () => {
    assert.match(keyA, /^mrk_/);
    const text = (await runCli(['keys', 'list', '--file', file])).stdout;
    assert.match(text, new RegExp(`^${keyDigest(keyA).slice(0, 12)}  tenant-a  -$`, 'm'));
    assert.ok(!(await import('node:fs')).readFileSync(file, 'utf8').includes(keyA));
    assert.equal((await call(t.base, 'GET', '/v1/stats', undefined, bearer(keyA))).body.namespace, 'tenant-a');
    assert.equal((await call(t.base, 'GET', '/v1/stats', undefined, bearer(keyA, { 'memory-namespace': 'default' }))).status, 403);
    assert.equal((await call(t.base, 'GET', '/v1/stats', undefined, bearer(keyOp, { 'memory-namespace': 'tenant-z' }))).body.namespace, 'tenant-z');
    assert.equal((await call(t.base, 'GET', '/v1/stats')).status, 401);
  });

  test('a key added while the service runs works once the change is read; a malformed line does not stop the rest', async () => {
    const before = t.service.keysFile!.reloads;
    appendFileSync(file, 'this line is not a key\n');
    const added = await runCli(['keys', 'add', '--namespace', 'tenant-late', '--rate', '3', '--file', file]);
    const late = added.stdout.trim();
    await until(async () => (await call(t.base, 'GET', '/v1/stats', undefined, bearer(late))).status === 200, 'the new key accepted');
    assert.ok(t.service.keysFile!.reloads > before);
    // Its own rate (3 a minute), not SERVICE_RATE_LIMIT; other keys keep theirs.
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(t.base, 'GET', '/v1/stats', undefined, bearer(late))).status);
    assert.ok(statuses.includes(429), JSON.stringify(statuses));
    assert.equal((await call(t.base, 'GET', '/v1/stats', undefined, bearer(keyA))).status, 200);
  });

  test('/metrics is for operator keys: its gauges are not a bound key\'s namespace', async () => {
    const bound = await call(t.base, 'GET', '/metrics', undefined, bearer(keyA));
    assert.equal(bound.status, 403);
    assert.equal(bound.body.code, 'NAMESPACE_FORBIDDEN');
    assert.equal((await call(t.base, 'GET', '/metrics', undefined, bearer(keyOp))).status, 200);
  });

  test('SIGHUP re-reads the file', async () => {
    const before = t.service.keysFile!.reloads;
    process.kill(process.pid, 'SIGHUP');
    await until(() => t.service.keysFile!.reloads > before, 'a reload after SIGHUP');
  });

  test('revoking under 32 concurrent clients: no 5xx, and nothing served under the revoked key once the reload is done', async () => {
    const victim = (await runCli(['keys', 'add', '--namespace', 'tenant-v', '--file', file])).stdout.trim();
    await until(async () => (await call(t.base, 'GET', '/v1/stats', undefined, bearer(victim))).status === 200, 'the victim key accepted');
    let stop = false;
    let reloadedAt = Infinity;
    const served: { started: number; status: number; key: string }[] = [];
    const client = async (i: number) => {
      const key = i % 2 === 0 ? victim : keyA;
      while (!stop) {
        const started = performance.now();
        const r = await call(t.base, i % 4 < 2 ? 'GET' : 'POST', i % 4 < 2 ? '/v1/stats' : '/v1/recall', i % 4 < 2 ? undefined : { query: 'anything' }, bearer(key));
        served.push({ started, status: r.status, key });
      }
    };
    const clients = Array.from({ length: 32 }, (_, i) => client(i));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const reloads = t.service.keysFile!.reloads;
    const revoked = await runCli(['keys', 'revoke', keyDigest(victim).slice(0, 16), '--file', file]);
    assert.equal(revoked.code, 0, revoked.stderr);
    // Not any reload: the poll may still re-read the file the `keys add` above wrote.
    await until(() => !t.service.keysFile!.keys.has(keyDigest(victim)), 'the reload after the revocation');
    assert.ok(t.service.keysFile!.reloads > reloads);
    reloadedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop = true;
    await Promise.all(clients);
    assert.deepEqual(served.filter((r) => r.status >= 500), [], 'no 5xx');
    const afterReload = served.filter((r) => r.key === victim && r.started > reloadedAt);
    assert.ok(afterReload.length > 0, 'the victim kept asking after the reload');
    assert.deepEqual([...new Set(afterReload.map((r) => r.status))], [401]);
    assert.ok(served.some((r) => r.key === victim && r.status === 200), 'the victim was served before');
    assert.ok(served.filter((r) => r.key === keyA).every((r) => r.status === 200), 'the other key never failed');
  });

  test('a file rewritten with garbage keeps the keys that parse; an emptied file revokes all', async () => {
    writeFileSync(file, `garbage\n${keyDigest(keyA)} tenant-a\n`);
    await until(async () => (await call(t.base, 'GET', '/v1/stats', undefined, bearer(keyOp))).status === 401, 'the operator key gone');
    assert.equal((await call(t.base, 'GET', '/v1/stats', undefined, bearer(keyA))).status, 200);
    writeFileSync(file, '');
    await until(async () => (await call(t.base, 'GET', '/v1/stats', undefined, bearer(keyA))).status === 401, 'every key gone');
  });
});

describe('keys add and revoke take turns on the file (issue 25 review: a concurrent add could undo a revoke)', () => {
  const digests = (path: string) => parseKeysFile(readFileSync(path, 'utf8')).keys.map((k) => k.digest);

  test('while another holds the lock, add and revoke wait, then both land', async () => {
    const dir = tempDir('memrt-keys-lock-');
    const file = join(dir, 'keys');
    const old = keyDigest('old-key');
    writeFileSync(file, `${old} tenant-a\n`);
    // Another command's edit in progress: the lock held here.
    const holder = new Database(`${file}.lock`);
    holder.exec('BEGIN EXCLUSIVE');
    const adding = runCli(['keys', 'add', '--namespace', 'tenant-b', '--file', file]);
    const revoking = runCli(['keys', 'revoke', old.slice(0, 12), '--file', file]);
    // Both processes are up and waiting (a CLI start takes well under this); the file is untouched.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.deepEqual(digests(file), [old], 'nothing changed while the lock was held');
    holder.exec('ROLLBACK');
    holder.close();
    const [added, revoked] = await Promise.all([adding, revoking]);
    assert.equal(added.code, 0, added.stderr);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.deepEqual(digests(file), [keyDigest(added.stdout.trim())], 'the revoke and the add both took effect');
  });

  test('12 concurrent adds and a revoke: every add is kept, the revoked key stays gone', async () => {
    const dir = tempDir('memrt-keys-race-');
    const file = join(dir, 'keys');
    const old = keyDigest('revoked-key');
    writeFileSync(file, `${old} tenant-a\n`);
    const runs = await Promise.all([
      ...Array.from({ length: 6 }, () => runCli(['keys', 'add', '--namespace', 'tenant-b', '--file', file])),
      runCli(['keys', 'revoke', old.slice(0, 12), '--file', file]),
      ...Array.from({ length: 6 }, () => runCli(['keys', 'add', '--namespace', 'tenant-c', '--file', file])),
    ]);
    for (const run of runs) assert.equal(run.code, 0, run.stderr);
    const added = runs.filter((run) => run.stdout.trim() !== '').map((run) => keyDigest(run.stdout.trim()));
    assert.equal(added.length, 12);
    assert.deepEqual(new Set(digests(file)), new Set(added));
  });
});
