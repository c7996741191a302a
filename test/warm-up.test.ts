// Warm-up before listening: every interactive pool thread embeds and recalls before the service
// takes its first request, so the first clients do not pay for model loading and cold code.
// Real Piscina threads, a real SQLite file, a real service; order is asserted, never timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { loadConfig, defaultPoolThreads } from '../src/shared/config.js';
import { createLogger } from '../src/shared/logger.js';
import { ReadPool } from '../src/core/pool/read-pool.js';
import { startService } from '../src/service.js';
import { WriterClient } from '../src/core/writer-client.js';
import { WARM_UP_ROUNDS, warmUp } from '../src/workers/warm-up.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { availableParallelism } from 'node:os';
import { tempDir } from './support/service.js';

const QUESTIONS = 8;

test('each interactive thread warms up once: it embeds and recalls with every warm-up question', async () => {
  const dir = tempDir();
  const config = loadConfig({ SERVICE_PATH: join(dir, 'memory.db'), SERVICE_EMBEDDER: 'hash', SERVICE_POOL_THREADS: '3', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0' });
  const writer = await WriterClient.start(config);
  const pool = new ReadPool(config, createLogger('silent'));
  try {
    const reports = await pool.warmUp();
    assert.equal(reports.length, 3);
    // One task each, sent together: three different threads answered.
    assert.equal(new Set(reports.map((r) => r.threadId)).size, 3);
    for (const report of reports) {
      assert.equal(report.embedded, WARM_UP_ROUNDS * QUESTIONS);
      assert.equal(report.recalled, WARM_UP_ROUNDS * QUESTIONS);
    }
  } finally {
    await pool.close();
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without an engine (PostgreSQL) only the embedder warms; without embedding (an endpoint) nothing is embedded', async () => {
  const embedderOnly = await warmUp(Promise.resolve(new HashingEmbedder(64)), { embed: true, recall: null });
  assert.deepEqual([embedderOnly.embedded, embedderOnly.recalled], [WARM_UP_ROUNDS * QUESTIONS, 0]);
  // An endpoint embedder that would fail is never awaited, let alone called.
  const failing = Promise.reject(new Error('endpoint down'));
  failing.catch(() => {});
  const nothing = await warmUp(failing, { embed: false, recall: null });
  assert.deepEqual([nothing.embedded, nothing.recalled], [0, 0]);
});

test('the service says its threads warmed up before it says it listens', async () => {
  const dir = tempDir();
  const lines: { msg: string; threads?: number }[] = [];
  const log = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const config = loadConfig({
    HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: join(dir, 'memory.db'), SERVICE_EMBEDDER: 'hash',
    SERVICE_POOL_THREADS: '2', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0', SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1',
  });
  const service = await startService(config, log);
  try {
    const messages = lines.map((l) => l.msg);
    const warmed = messages.indexOf('pool threads warmed up');
    assert.ok(warmed >= 0, `no warm-up line in ${messages.join(', ')}`);
    assert.ok(warmed < messages.indexOf('listening'));
    assert.equal(lines[warmed].threads, 2);
  } finally {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SERVICE_POOL_THREADS defaults to the cores the process may use', () => {
  const path = join(tempDir(), 'm.db');
  assert.equal(defaultPoolThreads(), Math.min(64, availableParallelism()));
  assert.equal(loadConfig({ SERVICE_PATH: path }).poolThreads, defaultPoolThreads());
  assert.equal(loadConfig({ SERVICE_PATH: path, SERVICE_POOL_THREADS: '3' }).poolThreads, 3);
  rmSync(join(path, '..'), { recursive: true, force: true });
});
