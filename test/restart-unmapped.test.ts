// After a restart on a file with memories, nothing of the file is mapped until a client reads: the
// interactive threads warm up unmapped (workers/worker.ts) and the background lane's upkeep (the
// embedding backfill's look for pending rows, the IVF status the start pokes) reads through SQLite's
// page cache. The review's probe failed 1 run in 4 when it looked after the backfill's first task
// had mapped the file; here the upkeep is waited for, so the mapping would be seen every time.
// /proc/self/maps: the pool threads run in this process; the writer maps nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { post, rememberMany, startTestService, tempDir } from './support/service.js';

const mappings = (path: string) => readFileSync('/proc/self/maps', 'utf8').split('\n').filter((line) => line.endsWith(path)).length;

test('after a restart and its upkeep, nothing maps the file until a client recalls', { skip: process.platform !== 'linux' }, async () => {
  const path = join(tempDir(), 'memory.db');
  const env = { SERVICE_PATH: path, SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '64' };
  let t = await startTestService(env);
  await rememberMany(t.base, 'maria', 200, 'maria likes coffee');
  await t.service.backfill.idle();
  await t.close();
  t = await startTestService(env);
  try {
    // What the start poked has run: the backfill's look for pending rows, the IVF upkeep's status.
    await t.service.backfill.idle();
    await t.service.vectorIndexer.flush();
    assert.equal(mappings(path), 0, 'the warm-up and the upkeep read unmapped');
    // The interactive threads keep the map: a client's recall maps the file (the probe sees it).
    assert.equal((await post(t.base, '/v1/recall', { query: 'which coffee does maria like' })).status, 200);
    assert.ok(mappings(path) > 0, 'a client recall reads through the map');
  } finally {
    await t.close();
  }
});
