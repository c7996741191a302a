// A pool thread started after the pool (one replacing a thread that died) warms up with the file
// unmapped (workers/worker.ts) like the first threads, and takes no client task before its warm-up
// has ended: the client's recall reads through the memory map. Real Piscina threads on the real
// worker file, as LanePool starts the interactive lane, over a real SQLite file;
// /proc/self/maps lists the file while a connection of this process (the pool threads run in it)
// has it mapped: the writer here maps nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import { openDatabase } from '../src/shared/db.js';
import { loadConfig } from '../src/shared/config.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { prepareVectorTable } from '../src/writer/sqlite/vector-table.js';
import { embedderIdentity } from '../src/workers/embedding/index.js';
import type { PoolWorkerData, TaskOf } from '../src/shared/protocol/pool.js';
import type { ValidatedRecall } from '../src/shared/schemas.js';
import { memoryInserter } from './support/rows.js';
import { tempDir } from './support/service.js';

const mapped = (path: string) => readFileSync('/proc/self/maps', 'utf8').split('\n').some((line) => line.endsWith(path));

test('a replacement thread takes no client recall before its warm-up (file unmapped) has ended: the recall reads mapped', { skip: process.platform !== 'linux' }, async () => {
  const dir = tempDir('memrt-warm-replace-');
  const path = join(dir, 'memory.db');
  const config = loadConfig({ SERVICE_PATH: path, SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '64', SERVICE_READ_MMAP_BYTES: String(64 * 2 ** 20) });
  const writer = openDatabase(path, { readonly: false });
  migrate(writer);
  prepareVectorTable(writer, embedderIdentity(config), false);
  const insert = memoryInserter(writer, ensureNamespace(writer, config.namespace));
  writer.transaction(() => {
    for (let i = 0; i < 200; i++) insert({ id: `m${i}`, content: `Maria recommended restaurant number ${i} for the trip to Lisbon` });
  })();
  // Reads come from the file itself, not the WAL (pages read from the WAL are never mapped).
  writer.pragma('wal_checkpoint(TRUNCATE)');
  assert.equal(writer.pragma('mmap_size', { simple: true }), 0, 'the writer maps nothing (else /proc/self/maps says nothing)');
  const workerData: PoolWorkerData & { lane: 'interactive' } = { config, closeChannel: null, lane: 'interactive' };
  const pool = new Piscina({
    filename: new URL('../src/workers/worker.js', import.meta.url).href,
    minThreads: 1, maxThreads: 1, idleTimeout: Number.POSITIVE_INFINITY, concurrentTasksPerWorker: 1, atomics: 'sync', workerData,
  });
  const recall: TaskOf<'recall'> = {
    op: 'recall', namespace: config.namespace,
    input: { query: 'which restaurant did Maria recommend', entity: null, limit: 5, types: null, explain: false } as ValidatedRecall,
  };
  try {
    const first = await pool.run({ op: 'warmUp', namespace: config.namespace });
    assert.equal(first.value.recalled, 32, 'the first thread warmed up, recalls included');
    assert.ok(!mapped(path), 'its warm-up left no mapping');
    const [thread] = pool.threads;
    const replaced = new Promise((resolve) => pool.once('workerCreate', resolve));
    await thread.terminate();
    await replaced;
    // Sent as soon as Piscina has a replacement: it goes to that thread, the pool's only one.
    const answer = await pool.run(recall);
    assert.equal(answer.ok, true, JSON.stringify(answer));
    assert.ok(mapped(path), 'the recall ran after the warm-up, through the memory map');
    const report = (await pool.run({ op: 'warmUp', namespace: config.namespace })).value;
    assert.notEqual(report.threadId, first.value.threadId, 'a new thread');
    assert.equal(report.recalled, 32, 'the replacement warmed up, recalls included');
  } finally {
    await pool.destroy();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// A failure around the warm-up (here the namespace's lookup, on a file whose namespaces table
// is corrupt) must not fail the worker module's load: Piscina stops replacing a lane's threads
// once one fails while loading, and the lane would be left with none, its tasks never answered.
// The corruption is real (bytes overwritten on disk); opening the file and preparing the
// thread's statements read only the schema, so the first read of the table is the warm-up's.
test('a warm-up that fails (a corrupt namespaces table) is reported by the warmUp task as INTERNAL; the thread and its replacement stay and serve', async () => {
  const dir = tempDir('memrt-warm-fail-');
  const path = join(dir, 'memory.db');
  const config = loadConfig({ SERVICE_PATH: path, SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '64' });
  const writer = openDatabase(path, { readonly: false });
  migrate(writer);
  prepareVectorTable(writer, embedderIdentity(config), false);
  const insert = memoryInserter(writer, ensureNamespace(writer, config.namespace));
  insert({ id: 'm1', content: 'Maria recommended a restaurant in Lisbon' });
  writer.pragma('wal_checkpoint(TRUNCATE)');
  // The namespaces table's pages (the table and its name index), overwritten in the file itself.
  const pageSize = writer.pragma('page_size', { simple: true }) as number;
  const roots = writer.prepare<[], number>("SELECT rootpage FROM sqlite_master WHERE tbl_name = 'namespaces' AND rootpage > 0").pluck().all();
  assert.ok(roots.length >= 1);
  const file = openSync(path, 'r+');
  for (const root of roots) writeSync(file, Buffer.alloc(pageSize, 0xff), 0, pageSize, (root - 1) * pageSize);
  closeSync(file);
  const workerData: PoolWorkerData & { lane: 'interactive' } = { config, closeChannel: null, lane: 'interactive' };
  const pool = new Piscina({
    filename: new URL('../src/workers/worker.js', import.meta.url).href,
    minThreads: 1, maxThreads: 1, idleTimeout: Number.POSITIVE_INFINITY, concurrentTasksPerWorker: 1, atomics: 'sync', workerData,
  });
  const embedQueries: TaskOf<'embedQueries'> = { op: 'embedQueries', namespace: config.namespace, texts: ['lisbon'] };
  try {
    // Before the fix the task was rejected with the module's load error, and the thread replaced
    // by one that failed the same way: Piscina then started no more.
    const first = await pool.run({ op: 'warmUp', namespace: config.namespace });
    assert.equal(first.ok, false, JSON.stringify(first));
    assert.equal(first.error.code, 'INTERNAL');
    const [thread] = pool.threads;
    assert.equal(pool.threads.length, 1);
    // The same thread answers what does not read the file.
    const served = await pool.run(embedQueries);
    assert.equal(served.ok, true, JSON.stringify(served));
    assert.equal(served.value.vectors.length, 1);
    assert.equal(pool.threads[0], thread, 'the thread was kept');
    // A replacement (the thread died) warms up on the same file, fails the same way, and is kept too.
    const replaced = new Promise((resolve) => pool.once('workerCreate', resolve));
    await thread.terminate();
    await replaced;
    const again = await pool.run({ op: 'warmUp', namespace: config.namespace });
    assert.equal(again.ok, false, JSON.stringify(again));
    assert.equal(again.error.code, 'INTERNAL');
    assert.equal((await pool.run(embedQueries)).ok, true, 'the replacement serves');
    assert.equal(pool.threads.length, 1);
  } finally {
    await pool.destroy();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
