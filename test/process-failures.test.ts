// Failures of the process and its files, as an operator meets them: the writer thread dying,
// a database file SQLite cannot read at start-up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { get, post, startTestService, tempDir } from './support/service.js';
import { spawnExpectingFailure } from './support/process.js';
import { VECTOR_ENV } from './support/cli.js';

test('when the writer thread dies, health answers 503, writes fail with 503 and the service asks to exit', async () => {
  const fatal: string[] = [];
  const t = await startTestService(VECTOR_ENV, { onFatal: (reason) => fatal.push(reason) });
  try {
    assert.equal((await post(t.base, '/v1/remember', { entity: 'wd', fact: 'before the crash' })).status, 201);
    assert.equal((await get(t.base, '/v1/health')).status, 200);
    // A real thread death (as after a native crash or an uncaught error in the thread).
    await (t.service.writer as unknown as { worker: Worker }).worker.terminate();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(fatal.length, 1);
    const health = await get(t.base, '/v1/health');
    assert.equal(health.status, 503);
    assert.equal(health.body.code, 'WRITER_UNAVAILABLE');
    assert.ok(Number(health.headers.get('retry-after')) > 0);
    const write = await post(t.base, '/v1/remember', { entity: 'wd', fact: 'after the crash' });
    assert.equal(write.status, 503);
    assert.equal(write.body.code, 'WRITER_UNAVAILABLE');
    // Reads still answer from the pool until the process exits.
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'wd' })).body.semantic.length, 1);
  } finally {
    await t.close();
  }
});

test('a database file SQLite cannot read stops the start with the file, SQLite\'s message and what to do', async () => {
  const dir = tempDir('memrt-corrupt-');
  const db = join(dir, 'memory.db');
  writeFileSync(db, Buffer.alloc(64 * 1024, 0x5a)); // not a database: garbage where the header should be
  const { code, output, stderr } = await spawnExpectingFailure({ SERVICE_PATH: db, ...VECTOR_ENV });
  assert.equal(code, 1);
  // The JSON log, plus one plain line on stderr for whoever started the service by hand.
  assert.match(stderr, /^memory-runtime: cannot start: .*memory\.db/m);
  const fatal = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line)).find((entry) => entry.level === 60);
  assert.ok(fatal, output);
  assert.equal(fatal.db, db);
  assert.equal(fatal.sqliteCode, 'SQLITE_NOTADB');
  assert.ok(typeof fatal.sqliteMessage === 'string' && fatal.sqliteMessage !== fatal.sqliteCode, 'SQLite\'s own message, not only its code');
  assert.ok(fatal.msg.includes(db));
});
