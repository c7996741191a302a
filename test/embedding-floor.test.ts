// The embedding backfill's floor (core/jobs/embedding-backfill.ts) embeds small batches through the
// interactive lane while a starved background batch holds the oldest rows of the same backlog:
// the floor takes the newest, so while the backlog is longer than both, neither embeds a row the
// other does. Real pool threads over a real SQLite file (test/backfill-under-recall-load.test.ts
// shows the floor at work in a service under load).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { loadConfig } from '../src/shared/config.js';
import { createLogger } from '../src/shared/logger.js';
import { openDatabase } from '../src/shared/db.js';
import { ReadPool } from '../src/core/pool/read-pool.js';
import { ensureNamespace } from '../src/writer/sqlite/migrate.js';
import { WriterClient } from '../src/core/writer-client.js';
import { memoryInserter } from './support/rows.js';
import { tempDir } from './support/service.js';

test('a floor batch takes the newest rows waiting for a vector, a background batch the oldest', async () => {
  const dir = tempDir();
  const path = join(dir, 'memory.db');
  const config = loadConfig({ SERVICE_PATH: path, SERVICE_EMBEDDER: 'hash', SERVICE_POOL_THREADS: '1', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0' });
  // The writer sets the file up (the vector table for the embedder); the rows go in beside it.
  const writer = await WriterClient.start(config);
  const db = openDatabase(path, { readonly: false });
  const insert = memoryInserter(db, ensureNamespace(db, 'tenant'));
  const rowids = Array.from({ length: 6 }, (_, i) => insert({ id: `m-${i}`, content: `member ${i} keeps a kayak in shed ${i}` }));
  insert({ id: 'embedded', content: 'member 9 keeps a canoe', embedded: 1 });
  db.close();
  const pool = new ReadPool(config, createLogger('silent'));
  try {
    const rowidsOf = (batch: { items: { rowid: number }[]; unembeddable: number[] }) => [...batch.items.map((item) => item.rowid), ...batch.unembeddable];
    const background = await pool.run({ op: 'embedPending', namespace: 'tenant', limit: 2 });
    const floor = await pool.run({ op: 'embedPending', namespace: 'tenant', limit: 2, newestFirst: true }, 'interactive');
    assert.deepEqual(rowidsOf(background), rowids.slice(0, 2));
    assert.deepEqual(rowidsOf(floor).sort((a, b) => a - b), rowids.slice(4, 6));
    assert.equal(floor.remaining, true, 'rows are left between the two');
    const { names } = await pool.run({ op: 'pendingNamespaces', namespace: 'tenant' }, 'interactive');
    assert.deepEqual(names, ['tenant']);
  } finally {
    await pool.close();
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
