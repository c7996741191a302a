// The CLI's surface (help, exit codes, serve, reembed). The instance lock has its own tests
// (instance-lock.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CLI, runCli, VECTOR_ENV } from './support/cli.js';
import { post, startTestService, tempDir } from './support/service.js';
import { openDatabase } from '../src/shared/db.js';
import { exited } from './support/process.js';

const COMMANDS = ['serve', 'restore', 'snapshots', 'export', 'import', 'reembed'];

test('every command has --help; the bare command lists them', async () => {
  const top = await runCli(['--help']);
  assert.equal(top.code, 0);
  for (const name of COMMANDS) assert.match(top.stdout, new RegExp(`^  ${name}\\s+\\S`, 'm'));
  for (const name of COMMANDS) {
    const r = await runCli([name, '--help']);
    assert.equal(r.code, 0, name);
    assert.match(r.stdout, new RegExp(`^Usage: memory-runtime ${name}`), name);
    assert.match(r.stdout, /--db <path>/);
  }
  assert.equal((await runCli([])).code, 2);
});

test('bad input exits non-zero with one line', async () => {
  for (const [args, code, pattern] of [
    [['frobnicate'], 2, /unknown command 'frobnicate'/],
    [['restore'], 2, /missing argument/],
    [['restore', 'not-an-id'], 2, /not a snapshot id/],
    [['snapshots', '--colour'], 2, /Unknown option '--colour'/],
    [['restore', '0b3d6a36-0000-4000-8000-000000000001', '--db', '/nonexistent/dir/memory.db'], 1, /snapshot not found/],
    [['reembed', '--db', '/nonexistent/dir/memory.db'], 1, /no database at/],
  ] as [string[], number, RegExp][]) {
    const r = await runCli(args);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

test('serve runs the service like npm start and stops on SIGTERM', async () => {
  const dir = tempDir('memrt-serve-');
  const child = spawn(process.execPath, [CLI, 'serve', '--db', join(dir, 'memory.db')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let output = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk;
        const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(output);
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
    });
    const health = await fetch(`http://127.0.0.1:${port}/v1/health`);
    assert.equal(health.status, 200);
    child.kill('SIGTERM');
    await exited(child);
    assert.equal(child.exitCode, 0);
  } finally {
    child.kill('SIGKILL');
  }
});

test('reembed moves every memory to the configured embedder, offline', async () => {
  const dir = tempDir();
  const db = join(dir, 'memory.db');
  const t = await startTestService({ SERVICE_PATH: db, SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '8' });
  for (let i = 0; i < 7; i++) await post(t.base, '/v1/remember', { entity: 'rb', fact: `reembed fact ${i}` });
  await t.service.backfill.idle();
  await t.service.close();

  const r = await runCli(['reembed', '--db', db], { env: { SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '16' } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /reembedded 7 memories with hash-16 \(16-d\)/);

  // The service now starts with the new embedder without SERVICE_REEMBED, and has nothing left to embed.
  const again = await startTestService({ SERVICE_PATH: db, SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '16' });
  try {
    const recall = await post(again.base, '/v1/recall', { query: 'reembed fact 4', limit: 1 });
    assert.equal(recall.body.memories[0].content, 'reembed fact 4');
    assert.equal(again.service.backfill.embedded, 0, 'nothing was left for the service to embed');
  } finally {
    await again.service.close();
  }
  const check = openDatabase(db, { readonly: true });
  const sample = check.prepare('SELECT embedding FROM memory_vectors LIMIT 1').get() as { embedding: Buffer };
  const count = (check.prepare('SELECT count(*) AS n FROM memory_vectors_rowids').get() as { n: number }).n;
  check.close();
  assert.equal(sample.embedding.byteLength, 16 * 4);
  assert.equal(count, 7);
});
