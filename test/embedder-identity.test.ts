// The database records which embedder made its vectors: a different one at start-up is a
// clear error, or, with SERVICE_REEMBED=true, a full re-embed in the background.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { loadConfig } from '../src/shared/config.js';
import { createLogger } from '../src/shared/logger.js';
import { startService } from '../src/service.js';
import { post, tempDir } from './support/service.js';

const base = (dir: string, extra: Record<string, string>) =>
  loadConfig({ HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: join(dir, 'memory.db'), SERVICE_RATE_LIMIT: '0', ...extra });

test('a changed embedder is refused, then re-embedded on request', async () => {
  const dir = tempDir();
  const first = await startService(base(dir, { SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '64' }), createLogger('silent'));
  for (let i = 0; i < 5; i++) {
    await post(`http://127.0.0.1:${first.port}`, '/v1/remember', { entity: 'em', fact: `embedder fact ${i}` });
  }
  await first.backfill.idle();
  await first.close();

  await assert.rejects(
    startService(base(dir, { SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '32' }), createLogger('silent')),
    (error: Error) => /hash-64 \(64-d\).*hash-32 \(32-d\).*SERVICE_REEMBED=true/.test(error.message),
  );

  const second = await startService(
    base(dir, { SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '32', SERVICE_REEMBED: 'true' }),
    createLogger('silent'),
  );
  await second.backfill.idle();
  const recall = await post(`http://127.0.0.1:${second.port}`, '/v1/recall', { query: 'embedder fact 3', limit: 5 });
  assert.equal(recall.body.memories[0].content, 'embedder fact 3');
  await second.close();

  const db = openDatabase(join(dir, 'memory.db'), { readonly: true });
  const meta = Object.fromEntries((db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
  const vectors = db.prepare('SELECT count(*) AS n FROM memory_vectors_rowids').get() as { n: number };
  const sample = db.prepare('SELECT embedding FROM memory_vectors LIMIT 1').get() as { embedding: Buffer };
  db.close();
  assert.deepEqual([meta.embedder, meta.embedding_dimensions], ['hash-32', '32']);
  assert.equal(vectors.n, 5);
  assert.equal(sample.embedding.byteLength, 32 * 4);
});

test('configuration errors name the variable', () => {
  assert.throws(() => loadConfig({ SERVICE_EMBEDDER: 'word2vec' }), /SERVICE_EMBEDDER/);
  assert.throws(() => loadConfig({ SERVICE_EMBEDDER: 'openai' }), /SERVICE_EMBEDDINGS_MODEL/);
  assert.throws(() => loadConfig({ PORT: 'eighty' }), /PORT/);
  assert.throws(() => loadConfig({ SERVICE_RATE_LIMIT: '-1' }), /SERVICE_RATE_LIMIT/);
  assert.throws(() => loadConfig({ SERVICE_VECTOR_MIN_SIMILARITY: '2' }), /SERVICE_VECTOR_MIN_SIMILARITY/);
  assert.ok(Object.isFrozen(loadConfig({})));
});

test('SERVICE_READ_MMAP_BYTES reaches the read connections', async () => {
  const { openDatabase } = await import('../src/shared/db.js');
  const dir = tempDir();
  const path = join(dir, 'm.db');
  openDatabase(path, { readonly: false }).close();
  const config = loadConfig({ SERVICE_PATH: path, SERVICE_READ_MMAP_BYTES: '0' });
  assert.equal(config.readMmapBytes, 0);
  const off = openDatabase(path, { readonly: true, mmapBytes: config.readMmapBytes });
  const on = openDatabase(path, { readonly: true });
  assert.equal(off.pragma('mmap_size', { simple: true }), 0);
  assert.ok((on.pragma('mmap_size', { simple: true }) as number) > 0);
  off.close();
  on.close();
  assert.throws(() => loadConfig({ SERVICE_READ_MMAP_BYTES: 'lots' }), /SERVICE_READ_MMAP_BYTES/);
});
