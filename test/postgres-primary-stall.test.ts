// A recall snapshot on the primary is bounded (issue 31): a real primary behind a TCP proxy
// that stalls (connections kept open, nothing forwarded either way — a primary killed under a
// connection the client never sees close). Without a read URL the primary is the only place a
// recall can read: once the stalled snapshot passes its bound and a new connection finds no
// primary answering either, the read is abandoned and the recall answers 503
// DATABASE_UNAVAILABLE with Retry-After instead of never answering; once the path is open again,
// recall answers 200 again. A recall that is merely slow is not abandoned: the primary answers
// the new connection and the read goes on (the same bound and check, workers/postgres/replica.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadConfig } from '../src/shared/config.js';
import { createLogger } from '../src/shared/logger.js';
import { startService, type RunningService } from '../src/service.js';
import { postgresUnavailable, startPrimary, type PgCluster } from './support/postgres.js';
import { post, tempDir } from './support/service.js';
import { tcpProxy, type TcpProxy } from './support/tcp-proxy.js';
import { createDatabase } from './support/test-backend.js';

const unavailable = postgresUnavailable();

describe('recall when the primary connection stalls', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let primary: PgCluster;
  let proxy: TcpProxy;
  let service: RunningService;
  let base: string;
  const FACT = 'the heron fishes below the weir';

  before(async () => {
    primary = await startPrimary();
    proxy = await tcpProxy(primary.port);
    await createDatabase(primary.url, undefined, 'primary_stall');
    const dir = tempDir();
    service = await startService(loadConfig({
      HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: join(dir, 'memory.db'), SERVICE_RATE_LIMIT: '0', SERVICE_EMBEDDER: 'hash',
      SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0', SERVICE_POOL_THREADS: '1',
      SERVICE_DATABASE_URL: `postgres://memrt@127.0.0.1:${proxy.port}/primary_stall`,
    }), createLogger('error', { write: () => {} }));
    base = `http://127.0.0.1:${service.port}`;
    assert.equal((await post(base, '/v1/remember', { entity: 'heron', fact: FACT })).status, 201);
  });
  after(async () => {
    await service?.close();
    await proxy?.close();
    await primary?.stop();
  });

  // A liveness bound on each request (a hang fails the test instead of the run), not a speed check.
  const recall = (query: string) => post(base, '/v1/recall', { query }, undefined, AbortSignal.timeout(30_000));

  test('a stalled primary connection: the recall answers 503 DATABASE_UNAVAILABLE with Retry-After, not never; 200 again once it answers', async () => {
    // The pool thread's primary connection is open and idle, as between recalls.
    const warm = await recall('heron weir');
    assert.equal(warm.status, 200, JSON.stringify(warm.body));
    assert.ok(warm.body.memories.some((m: { content: string }) => m.content === FACT));

    proxy.stall();
    // Another query than before: no cached answer stands in for the read.
    const stalled = await recall('where does the heron fish');
    assert.equal(stalled.status, 503, JSON.stringify(stalled.body));
    assert.equal(stalled.body.code, 'DATABASE_UNAVAILABLE');
    assert.ok(stalled.headers.get('retry-after'), 'with Retry-After');

    proxy.open();
    for (let attempt = 0; ; attempt++) {
      const again = await recall(`heron fishing ${attempt}`);
      if (again.status === 200) {
        assert.ok(again.body.memories.some((m: { content: string }) => m.content === FACT));
        break;
      }
      assert.equal(again.status, 503, JSON.stringify(again.body));
      assert.ok(attempt < 50, 'recall never answered 200 again');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
});
