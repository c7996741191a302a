// Start-up against a PostgreSQL database it cannot use: the real service process (dist/src/main.js)
// must not hang. A connection failure of the primary is retried for SERVICE_DATABASE_START_TIMEOUT_MS (15 s by
// default; shortened here so each case is quick), a refusal that waiting cannot change (password,
// missing database) ends it at once; either way it exits non-zero with one stderr line naming the
// variable, the URL without its password, and the cause. A database that comes up within the
// wait is used.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { postgresUnavailable, startPrimary, type PgCluster } from './support/postgres.js';
import { exited, MAIN, spawnExpectingFailure, spawnService } from './support/process.js';
import { post, tempDir } from './support/service.js';

const unavailable = postgresUnavailable();
const SECRET = 'hunter2-secret';

/** A TCP port that accepts connections and never answers (a black-holed database). */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls until `done` (20 s at most: far above the start-up bound under test). */
async function until(done: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting; output:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function baseEnv(extra: Record<string, string>): Record<string, string> {
  return { SERVICE_PATH: join(tempDir(), 'memory.db'), SERVICE_EMBEDDER: 'hash', LOG_LEVEL: 'warn', ...extra };
}

/** Exits non-zero on its own (not killed by the 15 s guard), within `withinMs`, with the stderr line. */
async function failsWith(env: Record<string, string>, variable: string, cause: RegExp, withinMs: number): Promise<string> {
  const started = performance.now();
  const { code, stderr, output } = await spawnExpectingFailure(baseEnv(env));
  const took = performance.now() - started;
  assert.ok(code !== null && code !== 0, `exit code ${code}:\n${output}`);
  assert.ok(took < withinMs, `took ${Math.round(took)} ms (bound ${withinMs}):\n${output}`);
  const line = stderr.split('\n').find((l) => l.includes('cannot start')) ?? '';
  assert.match(line, new RegExp(`cannot connect to ${variable} \\(postgres://`), stderr);
  assert.match(line, cause, stderr);
  assert.ok(!output.includes(SECRET), `the password is shown:\n${output}`);
  return line;
}

describe('service start-up with an unusable PostgreSQL database', { skip: unavailable ?? false }, () => {
  let pg: PgCluster;
  before(async () => {
    pg = await startPrimary();
    await pg.sql(`CREATE ROLE app LOGIN PASSWORD 'right-password'`);
    await pg.requirePassword('app');
  });
  after(() => pg?.stop());

  test('connection refused: retried for the bound, then exit naming SERVICE_DATABASE_URL', async () => {
    const port = await closedPort();
    const line = await failsWith({
      SERVICE_DATABASE_URL: `postgres://memrt:${SECRET}@127.0.0.1:${port}/db`, SERVICE_DATABASE_START_TIMEOUT_MS: '1500',
    }, 'SERVICE_DATABASE_URL', /connection refused/, 12_000);
    assert.match(line, /memrt:\*\*\*@127\.0\.0\.1/);
    assert.match(line, /after retrying for \d+ s/);
  });

  test('a server that never answers: bounded too, "timed out"', async () => {
    const silent = await silentServer();
    try {
      await failsWith({
        SERVICE_DATABASE_URL: `postgres://memrt:${SECRET}@127.0.0.1:${silent.port}/db`, SERVICE_DATABASE_START_TIMEOUT_MS: '1500',
      }, 'SERVICE_DATABASE_URL', /timed out/, 12_000);
    } finally {
      await silent.close();
    }
  });

  test('wrong password and a missing database fail at once (default 15 s bound not waited)', async () => {
    await failsWith({ SERVICE_DATABASE_URL: `postgres://app:${SECRET}@127.0.0.1:${pg.port}/postgres` },
      'SERVICE_DATABASE_URL', /password authentication failed/, 10_000);
    await failsWith({ SERVICE_DATABASE_URL: `postgres://memrt:${SECRET}@127.0.0.1:${pg.port}/no_such_db` },
      'SERVICE_DATABASE_URL', /database "no_such_db" does not exist/, 10_000);
  });

  test('a replica that does not answer does not stop the start: a warning names SERVICE_READ_DATABASE_URL, recall reads the primary', async () => {
    const port = await closedPort();
    const node = await spawnService(baseEnv({
      SERVICE_DATABASE_URL: pg.url, SERVICE_READ_DATABASE_URL: `postgres://memrt:${SECRET}@127.0.0.1:${port}/postgres`,
      LOG_LEVEL: 'info',
    }));
    try {
      const warning = node.output().split('\n').find((line) => line.includes('replica not reachable at start')) ?? '';
      assert.match(warning, /"variable":"SERVICE_READ_DATABASE_URL"/, node.output());
      assert.match(warning, /connection refused/);
      assert.ok(!node.output().includes(SECRET), 'the password is shown');
      assert.equal((await post(node.base, '/v1/remember', { entity: 'starter', fact: 'starter came up without its replica' })).status, 201);
      const recall = await post(node.base, '/v1/recall', { query: 'came up without its replica' });
      assert.equal(recall.status, 200);
      assert.equal(recall.body.memories.length, 1);
    } finally {
      node.child.kill('SIGKILL');
      await exited(node.child);
    }
  });

  test('a replica URL naming a database that does not exist stops the start at once, naming SERVICE_READ_DATABASE_URL', async () => {
    await failsWith({
      SERVICE_DATABASE_URL: pg.url, SERVICE_READ_DATABASE_URL: `postgres://memrt:${SECRET}@127.0.0.1:${pg.port}/no_such_replica_db`,
    }, 'SERVICE_READ_DATABASE_URL', /database "no_such_replica_db" does not exist/, 10_000);
  });

  test('a database that comes up within the wait is used', async () => {
    await pg.halt();
    const child = spawn(process.execPath, [MAIN], {
      env: { ...process.env, ...baseEnv({ SERVICE_DATABASE_URL: pg.url, SERVICE_DATABASE_START_TIMEOUT_MS: '15000' }), HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c));
    child.stderr!.on('data', (c: Buffer) => (output += c));
    try {
      // Started only once the service has found it down and is retrying.
      await until(() => output.includes('database not reachable yet; retrying'), () => output);
      await pg.restart();
      await until(() => /"msg":"listening"/.test(output), () => output);
      const port = /"port":(\d+)[^\n]*"msg":"listening"/.exec(output)![1];
      assert.equal((await fetch(`http://127.0.0.1:${port}/v1/health`)).status, 200);
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  });
});
