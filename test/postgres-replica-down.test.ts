// A replica that goes away is not a recall failure (issue 16): a real primary, a real
// `pg_basebackup -R` replica, a service reading recall from the replica. Stopped with
// `pg_ctl stop -m immediate`, every recall still answers 200 from the primary (the snapshots
// metric says which side served), one warning is logged, and once the replica is started again
// recalls go back to it. Behind a TCP proxy that turns into a black hole (connections accepted,
// never answered), a recall waits the bounded connect time at most, not the client's 30 s. Behind
// a proxy that stalls (connections kept open, nothing forwarded either way: a replica killed
// under a connection the client does not see close), a recall on the stalled connection is
// abandoned at its bound and the primary answers it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadConfig } from '../src/shared/config.js';
import { createLogger } from '../src/shared/logger.js';
import { startService, type RunningService } from '../src/service.js';
import { postgresUnavailable, startPrimary, startReplica, type PgCluster } from './support/postgres.js';
import { parseSamples, sample } from './support/prometheus.js';
import { get, post, tempDir } from './support/service.js';
import { createDatabase } from './support/test-backend.js';
import { tcpProxy, type TcpProxy } from './support/tcp-proxy.js';

const unavailable = postgresUnavailable();

describe('recall when the replica goes away', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let primary: PgCluster;
  let replica: PgCluster;
  let proxy: TcpProxy;
  let service: RunningService;
  let base: string;
  const lines: string[] = [];
  const FACT = 'the kestrel nests on the bell tower';

  before(async () => {
    primary = await startPrimary();
    replica = await startReplica(primary);
    proxy = await tcpProxy(replica.port);
    const env = await createDatabase(primary.url, replica.url, 'replica_down');
    const dir = tempDir();
    service = await startService(loadConfig({
      HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: join(dir, 'memory.db'), SERVICE_RATE_LIMIT: '0', SERVICE_EMBEDDER: 'hash',
      SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0',
      // One interactive pool thread: its warning is said exactly once.
      SERVICE_POOL_THREADS: '1',
      SERVICE_DATABASE_URL: env.SERVICE_DATABASE_URL!,
      SERVICE_READ_DATABASE_URL: `postgres://memrt@127.0.0.1:${proxy.port}/replica_down`,
    }), createLogger('warn', { write: (line) => void lines.push(line) }));
    base = `http://127.0.0.1:${service.port}`;
    assert.equal((await post(base, '/v1/remember', { entity: 'kestrel', fact: FACT })).status, 201);
  });
  after(async () => {
    await service?.close();
    await proxy?.close();
    await replica?.stop();
    await primary?.stop();
  });

  async function served(): Promise<{ replica: number; primary: number }> {
    const samples = parseSamples((await get(base, '/metrics')).body as string);
    const side = (name: string) => sample(samples, 'memory_runtime_recall_snapshots_total', { side: name });
    return { replica: side('replica'), primary: side('primary') };
  }

  /** One recall that must answer 200 with the fact; how long it took. */
  async function recallsTheFact(): Promise<number> {
    const started = performance.now();
    // A liveness bound (a recall that hangs fails the test instead of the run), not a speed check.
    const r = await post(base, '/v1/recall', { query: 'kestrel bell tower' }, undefined, AbortSignal.timeout(30_000));
    const took = performance.now() - started;
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(r.body.memories.some((m: { content: string }) => m.content === FACT), JSON.stringify(r.body));
    return took;
  }

  /** Recalls until one is served by the replica (it is back), within 30 s. */
  async function backOnReplica(): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const before = await served();
      await recallsTheFact();
      if ((await served()).replica > before.replica) return;
      if (Date.now() > deadline) assert.fail('recall never went back to the replica');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  const warnings = () => lines.filter((line) => line.includes('replica unreachable')).length;

  test('the replica serves recall while it is up', async () => {
    const before = await served();
    await recallsTheFact();
    assert.deepEqual(await served(), { replica: before.replica + 1, primary: before.primary });
  });

  test('replica stopped: every recall answers 200 from the primary, one warning; restarted: back to the replica', async () => {
    await replica.halt();
    const before = await served();
    for (let i = 0; i < 5; i++) await recallsTheFact();
    const after = await served();
    assert.equal(after.replica, before.replica, 'nothing was served by the stopped replica');
    assert.equal(after.primary, before.primary + 5);
    assert.equal(warnings(), 1, lines.join(''));
    // Timed out: a connection whose server stopped under it may never be seen to close (the read bound ends it).
    assert.match(lines.find((line) => line.includes('replica unreachable'))!, /"cause":"(connection refused|connection closed[^"]*|connection reset|connection timed out)"/);
    await replica.restart();
    await backOnReplica();
  });

  test('a black-holed replica costs a recall the bounded connect time, then the primary serves at once', async () => {
    proxy.blackHole();
    const before = await served();
    const first = await recallsTheFact();
    assert.ok(first < 6_000, `the first recall took ${Math.round(first)} ms`);
    const next = await recallsTheFact();
    assert.ok(next < 1_000, `a recall within the retry window took ${Math.round(next)} ms`);
    const after = await served();
    assert.equal(after.primary, before.primary + 2);
    assert.equal(after.replica, before.replica);
    assert.equal(warnings(), 1, 'said at most once a minute per pool thread');
    proxy.open();
    await backOnReplica();
  });

  test('a replica connection that stops answering mid-recall: the read is abandoned at its bound, the primary answers, the client is replaced', async () => {
    await backOnReplica(); // a pooled connection to the replica is open and idle
    proxy.stall();
    const before = await served();
    await recallsTheFact();
    const after = await served();
    assert.equal(after.primary, before.primary + 1, 'the primary served the recall the stalled replica could not');
    assert.equal(after.replica, before.replica);
    proxy.open();
    await backOnReplica();
  });
});
