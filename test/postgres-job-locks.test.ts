// Background jobs cluster-wide (issue 16): nodes sharing one PostgreSQL database run each job —
// embedding backfill, IVF upkeep, the consolidation schedule — once between them, under session
// advisory locks; consolidation runs never overlap; a node killed with SIGKILL hands its jobs
// over. Real nodes: in-process services and a child process on a private PostgreSQL 15 cluster.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { KEEPALIVE, PostgresJobLocks } from '../src/core/jobs/postgres-job-locks.js';
import { DAY_MS } from '../src/shared/fsrs.js';
import { PG_LOCK_CLASS } from '../src/shared/postgres-schema.js';
import { connectReader, type Sql } from '../src/workers/postgres/client.js';
import { exited, spawnService, type ServiceProcess } from './support/process.js';
import { postgresUnavailable, startPrimary, type PgCluster } from './support/postgres.js';
import { post, startTestService, tempDir, type TestService } from './support/service.js';

const unavailable = postgresUnavailable();
const execFileP = promisify(execFile);
let cluster: PgCluster;
let databases = 0;
const open: { close(): Promise<unknown> }[] = [];

/** A fresh database (so tests do not see each other's rows), its URL and a connection to check rows. */
async function database(): Promise<{ url: string; sql: Sql }> {
  const name = `jobs_${++databases}`;
  await cluster.sql(`CREATE DATABASE ${name}`);
  const url = cluster.url.replace(/\/postgres$/, `/${name}`);
  const sql = connectReader(url, { max: 1 });
  open.push({ close: () => sql.end() });
  return { url, sql };
}

async function node(url: string, env: Record<string, string> = {}): Promise<TestService> {
  const t = await startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_DATABASE_URL: url, ...env });
  open.push(t);
  return t;
}

/** Waits for `check` to hold; the deadline only guards against a hang. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

const unembedded = async (sql: Sql) => (await sql<{ n: number }[]>`SELECT count(*) AS n FROM memories WHERE embedded = 0`)[0].n;

describe('background jobs on a PostgreSQL cluster', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  before(async () => {
    cluster = await startPrimary();
  });
  after(async () => {
    for (const item of open.reverse()) await item.close().catch(() => {});
    await cluster?.stop();
  });

  test('one holder per job and namespace; a cut session loses its locks and another node takes them', async () => {
    const { url, sql } = await database();
    const a = new PostgresJobLocks(url, 1);
    const b = new PostgresJobLocks(url, 1);
    const otherNamespace = new PostgresJobLocks(url, 2);
    open.push(a, b, otherNamespace);
    assert.equal(await a.hold('embeddingBackfill'), true);
    assert.equal(await a.hold('embeddingBackfill'), true, 'still held');
    assert.equal(await b.hold('embeddingBackfill'), false);
    assert.equal(await otherNamespace.hold('embeddingBackfill'), true, 'one lock per namespace');
    assert.equal(await b.hold('vectorIndex'), true, 'one lock per job');
    assert.equal(await a.hold('vectorIndex'), false);

    // The holder's session ends (a network cut, an operator's pg_terminate_backend).
    const [{ pid }] = await sql<{ pid: number }[]>`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND classid::bigint = ${PG_LOCK_CLASS.embeddingBackfill} AND objid = 1 AND granted`;
    await sql`SELECT pg_terminate_backend(${pid})`;
    await eventually(async () => b.hold('embeddingBackfill'), 'the other node takes the lock over');
    assert.equal(await a.hold('embeddingBackfill'), false, 'the reconnected session sees it lost the lock');
  });

  test('runs holding the run lock never overlap: the second waits for the first', async () => {
    const { url } = await database();
    const a = new PostgresJobLocks(url, 1);
    const b = new PostgresJobLocks(url, 1);
    open.push(a, b);
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = a.whileHolding('consolidationRun', async () => {
      events.push('a starts');
      await gate;
      events.push('a ends');
    });
    await eventually(async () => events.length === 1, 'the first run starts');
    const second = b.whileHolding('consolidationRun', async () => { events.push('b runs'); });
    await sleep(600); // b tries the lock meanwhile (every 200 ms)
    release();
    await Promise.all([first, second]);
    assert.deepEqual(events, ['a starts', 'a ends', 'b runs']);
    assert.equal(await a.hold('consolidationRun'), true, 'let go after each run');
  });

  test("a namespace's run does not wait for another namespace's run; two runs of one namespace still take turns", async () => {
    const { url, sql } = await database();
    // The locks look namespaces up by name; this database has no service, so only that table.
    await sql`CREATE TABLE namespaces (id serial PRIMARY KEY, name text UNIQUE NOT NULL, created_at bigint NOT NULL)`;
    await sql`INSERT INTO namespaces (name, created_at) VALUES ('tenant-a', 0), ('tenant-b', 0)`;
    const a = new PostgresJobLocks(url, 1);
    const b = new PostgresJobLocks(url, 1);
    open.push(a, b);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    const first = a.whileHolding('consolidationRun', async () => { started = true; await gate; }, undefined, 'tenant-b');
    await eventually(async () => started, 'the first run starts');
    // Another namespace's run goes ahead while tenant-b's holds its lock (it would wait forever otherwise).
    assert.equal(await b.whileHolding('consolidationRun', async () => 'ran', undefined, 'tenant-a'), 'ran');
    let sameRan = false;
    const same = b.whileHolding('consolidationRun', async () => { sameRan = true; }, undefined, 'tenant-b');
    await sleep(600); // b tries tenant-b's lock meanwhile (every 200 ms)
    assert.equal(sameRan, false, "tenant-b's second run waits for its first");
    release();
    await Promise.all([first, same]);
    assert.equal(sameRan, true);
  });

  test('two nodes: one embeds every row, whichever node wrote it; concurrent consolidations promote once', async () => {
    const { url, sql } = await database();
    const a = await node(url);
    const b = await node(url);
    const writes = [];
    for (let i = 0; i < 60; i++) writes.push(post((i % 2 ? a : b).base, '/v1/remember', { entity: `n${i % 5}`, fact: `fact number ${i} about the fleet` }));
    for (const r of await Promise.all(writes)) assert.equal(r.status, 201);
    await eventually(async () => (await unembedded(sql)) === 0, 'every row has a vector');
    // The counters move when the writer's reply reaches the job, a moment after the commit.
    await eventually(async () => a.service.backfill.embedded + b.service.backfill.embedded >= 60, 'the nodes count what they embedded');
    const embedded = [a.service.backfill.embedded, b.service.backfill.embedded];
    assert.ok(embedded.includes(0) && embedded.includes(60), `one node embedded all 60: ${embedded}`);

    for (const text of ['I go sailing every Sunday.', 'i go sailing every sunday', 'I go sailing every Sunday!']) {
      const id = (await post(b.base, '/v1/episodes/start', { participants: ['skipper'] })).body.episode_id;
      await post(b.base, `/v1/episodes/${id}/message`, { role: 'user', content: text });
    }
    const [first, second] = await Promise.all([post(a.base, '/v1/consolidate'), post(b.base, '/v1/consolidate')]);
    assert.deepEqual([first.status, second.status], [200, 200]);
    for (const body of [first.body, second.body]) assert.deepEqual(Object.keys(body).sort(), ['archived', 'decayed', 'promoted']);
    assert.equal(first.body.promoted + second.body.promoted, 1, 'promoted once between them');
    assert.deepEqual([a.service.consolidator.runs, b.service.consolidator.runs], [1, 1], 'each node ran the run it was asked for');
    const semantic = await sql<{ n: number }[]>`SELECT count(*) AS n FROM memories WHERE memory_type = 'semantic' AND content LIKE 'I go sailing%'`;
    assert.equal(semantic[0].n, 1);
  });

  test('POST /v1/consolidate behind another node\'s run waits SERVICE_CONSOLIDATE_WAIT_SECONDS, then 503 CONSOLIDATION_BUSY with Retry-After', async () => {
    const { url, sql } = await database();
    const a = await node(url, { SERVICE_CONSOLIDATE_WAIT_SECONDS: '1' });
    const [{ id: namespaceId }] = await sql<{ id: number }[]>`SELECT id FROM namespaces WHERE name = 'default'`;
    // Another node's run in progress: a session holding the namespace's run lock.
    const other = connectReader(url, { max: 1 });
    open.push({ close: () => other.end() });
    await other.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${PG_LOCK_CLASS.consolidationRun}::int, ${namespaceId}::int)`;
      const started = performance.now();
      const busy = await post(a.base, '/v1/consolidate', undefined, {}, AbortSignal.timeout(15_000));
      const waited = performance.now() - started;
      assert.deepEqual([busy.status, busy.body.code], [503, 'CONSOLIDATION_BUSY']);
      assert.equal(busy.headers.get('retry-after'), '10');
      assert.ok(waited >= 900 && waited < 10_000, `waited ${Math.round(waited)} ms`);
      assert.equal(a.service.consolidator.runs, 0, 'the dropped run never ran');
    });
    // Once the other run ends, a run goes through.
    const done = await post(a.base, '/v1/consolidate', undefined, {}, AbortSignal.timeout(15_000));
    assert.equal(done.status, 200);
    assert.equal(a.service.consolidator.runs, 1);
  });

  test('stopping a node while a consolidate waits for another node\'s run: the request answers 503 and the stop ends', async () => {
    const { url, sql } = await database();
    // A wait far longer than the test: only the stop can end it.
    const a = await node(url, { SERVICE_CONSOLIDATE_WAIT_SECONDS: '600' });
    const [{ id: namespaceId }] = await sql<{ id: number }[]>`SELECT id FROM namespaces WHERE name = 'default'`;
    const other = connectReader(url, { max: 1 });
    open.push({ close: () => other.end() });
    await other.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${PG_LOCK_CLASS.consolidationRun}::int, ${namespaceId}::int)`;
      const waiting = post(a.base, '/v1/consolidate', undefined, {}, AbortSignal.timeout(30_000));
      // The request is waiting on the lock (it tries every 200 ms).
      await sleep(500);
      const started = performance.now();
      const stopped = await Promise.race([a.close().then(() => 'stopped'), sleep(20_000).then(() => 'still stopping after 20 s')]);
      assert.equal(stopped, 'stopped');
      assert.ok(performance.now() - started < 10_000, 'the stop did not wait out the drain grace');
      const reply = await waiting;
      assert.deepEqual([reply.status, reply.body.code], [503, 'SHUTTING_DOWN']);
    });
  });

  test('a node killed with SIGKILL hands its jobs over: the other embeds and consolidates from then on', async () => {
    const { url, sql } = await database();
    const dir = tempDir();
    const env = { SERVICE_EMBEDDER: 'hash', SERVICE_DATABASE_URL: url, SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '1' };
    const child: ServiceProcess = await spawnService({ ...env, SERVICE_PATH: join(dir, 'memory.db') });
    open.push({ close: async () => { child.child.kill('SIGKILL'); await exited(child.child); } });
    const held = async () => (await sql<{ n: number }[]>`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND classid::bigint IN (${PG_LOCK_CLASS.embeddingBackfill}, ${PG_LOCK_CLASS.vectorIndex}, ${PG_LOCK_CLASS.consolidationSchedule})`)[0].n;
    await eventually(async () => (await held()) === 3, 'the first node holds the three jobs');
    const survivor = await node(url, { SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '1' });

    // While the first node lives, it embeds and consolidates what the survivor writes.
    const backdated = async (fact: string) => {
      assert.equal((await post(survivor.base, '/v1/remember', { entity: 'old-timer', fact })).status, 201);
      await sql`UPDATE memories SET last_access_at = last_access_at - ${3650 * DAY_MS} WHERE content = ${fact}`;
    };
    await backdated('Old-timer once sailed a clipper');
    const archived = async (fact: string) => (await sql<{ archived: number }[]>`SELECT archived FROM memories WHERE content = ${fact}`)[0].archived === 1;
    await eventually(async () => (await unembedded(sql)) === 0 && (await archived('Old-timer once sailed a clipper')), 'the first node embeds and archives');
    assert.deepEqual([survivor.service.backfill.embedded, survivor.service.consolidator.runs], [0, 0]);

    child.child.kill('SIGKILL');
    await exited(child.child);
    await backdated('Old-timer once rowed across the Channel');
    await eventually(async () => (await unembedded(sql)) === 0 && (await archived('Old-timer once rowed across the Channel')), 'the survivor takes over');
    // The rows change at the writer's commit; the survivor's own counters move when the reply
    // reaches its job a moment later, so they are waited for rather than read at once.
    await eventually(async () => survivor.service.backfill.embedded >= 1 && survivor.service.consolidator.runs >= 1,
      'the survivor counts the embedding and the consolidation run as its own');
  });
});

/** Runs `ip` (iproute2) as this (root) process; rejects on failure. */
const ip = (...args: string[]) => execFileP('ip', args);

/**
 * Two network namespaces joined by a veth pair: `server` (the database, 10.x.y.1) and `node`
 * (a service, 10.x.y.2). Taking the node's end down is a network that dies without a word: no
 * FIN, no RST, packets just stop. Null (the test skips) without the rights to make them.
 */
async function splitNetwork(): Promise<{ server: string; node: string; serverAddress: string; cut(): Promise<void>; remove(): Promise<void> } | null> {
  if (process.getuid?.() !== 0) return null;
  const tag = randomBytes(3).toString('hex');
  const [server, node] = [`mrs-${tag}`, `mrn-${tag}`];
  const octet = 16 + (parseInt(tag, 16) % 200);
  const serverAddress = `10.213.${octet}.1`;
  const remove = async () => {
    for (const ns of [server, node]) await ip('netns', 'del', ns).catch(() => {});
  };
  try {
    await ip('netns', 'add', server);
    await ip('netns', 'add', node);
    await ip('link', 'add', `vs-${tag}`, 'netns', server, 'type', 'veth', 'peer', 'name', `vn-${tag}`, 'netns', node);
    await ip('-n', server, 'addr', 'add', `${serverAddress}/24`, 'dev', `vs-${tag}`);
    await ip('-n', node, 'addr', 'add', `10.213.${octet}.2/24`, 'dev', `vn-${tag}`);
    for (const [ns, dev] of [[server, `vs-${tag}`], [node, `vn-${tag}`]] as const) {
      await ip('-n', ns, 'link', 'set', 'lo', 'up');
      await ip('-n', ns, 'link', 'set', dev, 'up');
    }
  } catch {
    await remove();
    return null;
  }
  return { server, node, serverAddress, cut: async () => { await ip('-n', node, 'link', 'set', `vn-${tag}`, 'down'); }, remove };
}

test('a node whose network dies loses its job-lock session, and the locks, within the keepalive bound', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, async (t) => {
  const net = await splitNetwork();
  if (!net) return t.skip('needs root and `ip netns` (network namespaces) to cut a network');
  const dir = tempDir();
  let primary: PgCluster | undefined;
  let child: ServiceProcess | undefined;
  try {
    primary = await startPrimary({ netns: net.server, listenAddress: net.serverAddress });
    await primary.sql('CREATE DATABASE cut_network');
    const url = primary.url.replace(/\/postgres$/, '/cut_network');
    // The node runs in the other namespace: its only way to the database is the veth pair.
    child = await spawnService({ SERVICE_EMBEDDER: 'hash', SERVICE_DATABASE_URL: url, SERVICE_PATH: join(dir, 'memory.db'), SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0' },
      ['ip', 'netns', 'exec', net.node]);
    const jobLocks = async () => Number(await primary!.sql(`SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = 'memory-runtime jobs' AND a.datname = 'cut_network'`));
    const deadline = Date.now() + 60_000;
    while ((await jobLocks()) < 2) {
      if (Date.now() > deadline) assert.fail('the node never took its job locks');
      await sleep(200);
    }
    await net.cut();
    const cutAt = performance.now();
    // The server's own default notices a silent peer only after hours (tcp_keepalive_time 7200 s).
    const bound = (KEEPALIVE.idle + KEEPALIVE.interval * KEEPALIVE.count) * 1000;
    while ((await jobLocks()) > 0) {
      if (performance.now() - cutAt > bound + 30_000) assert.fail(`the dead node still holds its locks ${Math.round((performance.now() - cutAt) / 1000)} s after its network died`);
      await sleep(500);
    }
    const freedAfter = performance.now() - cutAt;
    assert.ok(freedAfter >= KEEPALIVE.idle * 1000 * 0.8, `freed after ${Math.round(freedAfter)} ms: by the keepalive, not something else`);
  } finally {
    if (child) {
      child.child.kill('SIGKILL');
      await exited(child.child);
    }
    await primary?.stop();
    await net.remove();
  }
});
