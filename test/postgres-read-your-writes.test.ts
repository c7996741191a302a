// Read-your-writes on PostgreSQL with a streaming replica (issue 16, "Reads"), across nodes and
// clients: service nodes as real processes over a private primary and a `pg_basebackup -R`
// replica. Replay is paused on the replica (pg_wal_replay_pause) so it is provably behind the
// write under test; then which side served each recall (the node's
// memory_runtime_recall_snapshots_total{side}) and what it found show the path taken:
//   same node — the node's own last commit sends the recall to the primary, and back to the
//   replica once replay resumes; across nodes — a recall on node B sees node A's write when it
//   carries A's Memory-Position (REST header, the client's remembered position, MCP _meta), and
//   misses it without (which is what each test would see with the feature gone) — each positioned
//   call checked on a node that has committed nothing since the pause, so only its position can
//   send it to the primary; a position past the primary's own reads the primary at once; a node
//   whose writer cannot read its commit positions reads the primary (never a replica that may
//   lack them).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { MemoryClient } from '../src/client/index.js';
import { PG_LOCK_CLASS } from '../src/shared/postgres-schema.js';
import { POSITION_META_KEY as META_KEY, WAL_POSITION_PATTERN } from '../src/shared/wal-position.js';
import { mcpCall } from './support/mcp.js';
import { exited, spawnService, type ServiceProcess } from './support/process.js';
import { postgresUnavailable, replicaCaughtUp, startPrimary, startReplica, type PgCluster } from './support/postgres.js';
import { parseSamples, sample } from './support/prometheus.js';
import { get, groupedIds, post, tempDir } from './support/service.js';
import { createDatabase } from './support/test-backend.js';

const unavailable = postgresUnavailable();

const POSITION = new RegExp(WAL_POSITION_PATTERN);
/** Small, so each recall on a paused replica falls back to the primary quickly. */
const MAX_LAG_MS = 500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('read-your-writes across nodes and clients (PostgreSQL, paused replica)', { skip: unavailable ?? false }, () => {
  let primary: PgCluster;
  let replica: PgCluster;
  let a: ServiceProcess;
  let b: ServiceProcess;
  /** A third reader, for positioned calls after node B's own reinforcement commits. */
  let c: ServiceProcess;
  let env: Record<string, string>;
  const nodes: ServiceProcess[] = [];
  let words = 0;
  /** A word no other memory holds, so a recall of it finds exactly its fact. */
  const word = () => `ryw${(++words).toString(36)}zq`;

  async function startNode(database: Record<string, string>, maxLagMs = MAX_LAG_MS): Promise<ServiceProcess> {
    const dir = tempDir('memrt-ryw-');
    const node = await spawnService({
      ...database, SERVICE_PATH: join(dir, 'memory.db'), SERVICE_POOL_THREADS: '2', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0',
      SERVICE_EMBEDDER: 'hash', SERVICE_READ_MAX_LAG_MS: String(maxLagMs),
    });
    nodes.push(node);
    return node;
  }

  /** Polls `check` until it holds (what the cluster is waited for: replay, a lock, a commit). */
  async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
    const deadline = performance.now() + ms;
    while (!(await check())) {
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(10);
    }
  }

  /** Replay stopped: nothing committed from now on reaches the replica until resume(). */
  async function pause(): Promise<void> {
    await replica.sql('SELECT pg_wal_replay_pause()');
    await until('replay to pause', async () => (await replica.sql('SELECT pg_get_wal_replay_pause_state()')) === 'paused');
  }

  /** The replica has replayed everything the primary has flushed so far. */
  const caughtUp = () => replicaCaughtUp(primary, replica);

  /** Replay resumed and past everything the primary has flushed so far. */
  async function resume(): Promise<void> {
    await replica.sql('SELECT pg_wal_replay_resume()');
    await caughtUp();
  }

  /** Whether the paused replica lacks `position` (the fixture: the write under test is not there). */
  const replicaBehind = async (position: string) => (await replica.sql(`SELECT pg_last_wal_replay_lsn() < '${position}'::pg_lsn`)) === 't';

  const metrics = async (node: ServiceProcess) => parseSamples((await get(node.base, '/metrics')).body);
  /** Recall snapshots served by each side, and transactions committed, so far. */
  async function counts(node: ServiceProcess) {
    const m = await metrics(node);
    return {
      replica: sample(m, 'memory_runtime_recall_snapshots_total', { side: 'replica' }),
      primary: sample(m, 'memory_runtime_recall_snapshots_total', { side: 'primary' }),
      commits: sample(m, 'memory_runtime_writer_batch_commands_count'),
    };
  }
  async function servedSince(node: ServiceProcess, before: Awaited<ReturnType<typeof counts>>) {
    const now = await counts(node);
    return { replica: now.replica - before.replica, primary: now.primary - before.primary };
  }
  /**
   * A recall that returned a memory has its node reinforce it (a writer command ~250 ms later):
   * waited for after each such recall — the memory's access count reaching `times` — so no
   * commit of node B's lands unseen while replay is paused (it would move B's own position).
   */
  const reinforced = (id: string, times: number) =>
    until(`reinforcement ${times} of ${id}`, async () => Number(await primary.sql(`SELECT access_count FROM memories WHERE id = '${id}'`, 'ryw')) >= times);

  const remember = async (node: ServiceProcess, entity: string, fact: string) => {
    const r = await post(node.base, '/v1/remember', { entity, fact });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return { id: r.body.id as string, position: r.headers.get('memory-position') };
  };
  const recalled = async (node: ServiceProcess, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const r = await post(node.base, '/v1/recall', body, headers);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return (r.body.memories as { id: string }[]).map((m) => m.id);
  };

  /** Holders of the namespace's background-job locks (each writes on its own, e.g. vectors). */
  const jobLocksHeld = async (database: string) => Number(await primary.sql(`SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
    WHERE l.locktype = 'advisory' AND l.granted AND d.datname = '${database}'
      AND l.classid::bigint IN (${PG_LOCK_CLASS.embeddingBackfill}, ${PG_LOCK_CLASS.vectorIndex})`));

  before(async () => {
    primary = await startPrimary();
    replica = await startReplica(primary);
    env = await createDatabase(primary.url, replica.url, 'ryw');
    a = await startNode(env);
    // Node A takes the background jobs (it embeds every node's writes): node B then commits
    // nothing but its recalls' reinforcements, so its own last commit never decides where its
    // recalls read — only the position they carry does.
    await until('node A to hold the embedding and index locks', async () => (await jobLocksHeld('ryw')) === 2);
    b = await startNode(env);
    c = await startNode(env);
    await caughtUp(); // whatever the nodes committed starting up is on the replica before any pause
  });

  after(async () => {
    await replica?.sql('SELECT pg_wal_replay_resume()').catch(() => {});
    for (const node of nodes) {
      node.child.kill('SIGKILL');
      await exited(node.child);
    }
    await replica?.stop();
    await primary?.stop();
  });

  test('same node: the recall after a write reads the primary while the replica lacks it, the replica once it has it', async () => {
    const w = word();
    let before = await counts(a);
    await pause();
    let stored: { id: string; position: string | null };
    try {
      stored = await remember(a, 'ryw-same', `Alice wrote ${w}`);
      assert.match(stored.position ?? '', POSITION, 'the write names its commit position');
      assert.ok(await replicaBehind(stored.position!), 'the fixture: the replica has not replayed the write');
      assert.deepEqual(await recalled(a, { query: w }), [stored.id], 'the recall right after the write sees it');
      assert.deepEqual(await servedSince(a, before), { replica: 0, primary: 1 }, 'served by the primary: the replica lacked the write');
      await reinforced(stored.id, 1);
    } finally {
      await resume();
    }
    // Node A runs the background jobs: its vector for the write commits on its own time, and a
    // commit the replica has not replayed would send this recall to the primary. So: the vector
    // is in, then the replica has everything, right before the recall (and replay of any later
    // job commit has MAX_LAG_MS to land).
    await until('the write\'s vector', async () => Number(await primary.sql(`SELECT embedded FROM memories WHERE id = '${stored!.id}'`, 'ryw')) !== 0);
    await caughtUp();
    before = await counts(a);
    assert.deepEqual(await recalled(a, { query: w }), [stored.id]);
    assert.deepEqual(await servedSince(a, before), { replica: 1, primary: 0 }, 'the replica serves once it has replayed the write');
    await reinforced(stored.id, 2);
    await caughtUp();
  });

  test('across nodes: a recall on node B with node A\'s Memory-Position sees A\'s write; without it, it misses', async () => {
    const w = word();
    // The entity is new with the write: without it the paused replica answers no memory at all
    // (so node B reinforces nothing and its own position stays where the replica has been).
    const entity = `ryw-cross-${w}`;
    const before = await counts(b);
    const beforeC = await counts(c);
    await pause();
    try {
      const stored = await remember(a, entity, `Bob wrote ${w}`);
      assert.ok(await replicaBehind(stored.position!));
      assert.deepEqual(await recalled(b, { query: w, entity }), [], 'without the header: the replica, without the write');
      assert.deepEqual(await servedSince(b, before), { replica: 1, primary: 0 });
      assert.equal((await counts(b)).commits, before.commits, 'node B committed nothing: only the header can send its recall to the primary');
      assert.deepEqual(await recalled(b, { query: w, entity }, { 'memory-position': stored.position! }), [stored.id], 'with it: the write');
      assert.deepEqual(await servedSince(b, before), { replica: 1, primary: 1 }, 'served by the primary');
      await reinforced(stored.id, 1);
      // recall_grouped reads through the same choice of side. Node B has just committed its
      // reinforcement, which alone would send its recalls to the primary: node C, which has
      // committed nothing since the pause, shows the position does.
      assert.equal((await counts(c)).commits, beforeC.commits, 'node C committed nothing');
      const grouped = await post(c.base, '/v1/recall_grouped', { query: w, entity }, { 'memory-position': stored.position! });
      assert.equal(grouped.status, 200);
      assert.deepEqual(groupedIds(grouped.body), [stored.id]);
      assert.deepEqual(await servedSince(c, beforeC), { replica: 0, primary: 1 }, 'served by the primary');
      await reinforced(stored.id, 2);
    } finally {
      await resume();
    }
  });

  test('a malformed Memory-Position is refused with 400 naming the header, and nothing is read', async () => {
    const before = await counts(b);
    for (const bad of ['nope', '0/', '/1', '0/1/2', '123456789/0', '0/16B3748x', 'primary']) {
      for (const path of ['/v1/recall', '/v1/recall_grouped']) {
        const r = await post(b.base, path, { query: 'anything' }, { 'memory-position': bad });
        assert.equal(r.status, 400, `${path} ${JSON.stringify(bad)}`);
        assert.equal(r.body.code, 'INVALID_VALUE');
        assert.match(r.body.error, /Memory-Position/);
      }
    }
    assert.deepEqual(await servedSince(b, before), { replica: 0, primary: 0 });
  });

  test('the client remembers the furthest position it was answered and sends it with its recalls', async () => {
    const w = word();
    const entity = `ryw-client-${w}`;
    // One client over the fleet, as behind a load balancer: writes land on node A, recalls on node B.
    const fleetReadingOn = (reader: ServiceProcess) => (url: string | URL | Request, init?: RequestInit) => {
      const path = new URL(String(url)).pathname;
      return fetch((path.startsWith('/v1/recall') ? reader.base : a.base) + path, init);
    };
    const fleet = fleetReadingOn(b);
    const client = new MemoryClient({ baseUrl: 'http://fleet.invalid', fetch: fleet });
    assert.equal(client.position, undefined);
    const before = await counts(b);
    const beforeC = await counts(c);
    await pause();
    try {
      const stored = await client.remember({ entity, fact: `Carol wrote ${w}` });
      assert.match(client.position ?? '', POSITION);
      assert.ok(await replicaBehind(client.position!));
      const fresh = new MemoryClient({ baseUrl: 'http://fleet.invalid', fetch: fleet });
      assert.deepEqual((await fresh.recall({ query: w, entity })).memories, [], 'a client that saw no write: the replica, without it');
      assert.deepEqual((await client.recall({ query: w, entity })).memories.map((m) => m.id), [stored.id]);
      assert.deepEqual(await servedSince(b, before), { replica: 1, primary: 1 });
      await reinforced(stored.id, 1);
      // Handed over, the position gives another client the same guarantee — shown on node C, as
      // node B's reinforcement commit alone would now send B's recalls to the primary.
      const handedOver = new MemoryClient({ baseUrl: 'http://fleet.invalid', fetch: fleetReadingOn(c), position: client.position });
      assert.equal((await counts(c)).commits, beforeC.commits, 'node C committed nothing');
      assert.deepEqual((await handedOver.recall({ query: w, entity })).memories.map((m) => m.id), [stored.id]);
      assert.deepEqual(await servedSince(c, beforeC), { replica: 0, primary: 1 }, 'served by the primary');
      await reinforced(stored.id, 2);
    } finally {
      await resume();
    }
  });

  test('MCP: a write tool\'s result names the position in _meta; a recall tool given it in _meta sees the write', async () => {
    const w = word();
    const entity = `ryw-mcp-${w}`;
    const tool = (node: ServiceProcess, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => mcpCall(node.base, name, args, meta);
    const ids = (result: any) => (result.structuredContent.memories as { id: string }[]).map((m) => m.id);
    const before = await counts(b);
    await pause();
    try {
      const stored = await tool(a, 'remember', { entity, fact: `Dave wrote ${w}` });
      assert.notEqual(stored.isError, true);
      const position = stored._meta?.[META_KEY];
      assert.match(position ?? '', POSITION);
      assert.ok(await replicaBehind(position));
      assert.deepEqual(ids(await tool(b, 'recall', { query: w, entity })), [], 'without _meta: the replica, without the write');
      assert.deepEqual(ids(await tool(b, 'recall', { query: w, entity }, { [META_KEY]: position })), [stored.structuredContent.id]);
      assert.deepEqual(await servedSince(b, before), { replica: 1, primary: 1 });
      await reinforced(stored.structuredContent.id, 1);
      const bad = await tool(b, 'recall_grouped', { query: w }, { [META_KEY]: 'not-a-position' });
      assert.equal(bad.isError, true);
      assert.match(bad.content[0].text, /memory-runtime\/position/);
    } finally {
      await resume();
    }
  });

  test('a position past the primary\'s own (garbage, another cluster\'s) reads the primary at once, not after the replay wait', async () => {
    // A wait far longer than the answer may take: waiting for replay to reach FFFFFFFF/FFFFFFFF
    // would hold the recall the whole 30 s.
    const d = await startNode(env, 30_000);
    await caughtUp();
    const before = await counts(d);
    const started = performance.now();
    await recalled(d, { query: 'anything' }, { 'memory-position': 'FFFFFFFF/FFFFFFFF' });
    const took = performance.now() - started;
    assert.ok(took < 5_000, `answered in ${Math.round(took)} ms, well inside the 30 s wait`);
    assert.deepEqual(await servedSince(d, before), { replica: 0, primary: 1 }, 'served by the primary');
    // A position the replica has still reads the replica.
    await recalled(d, { query: 'anything' }, { 'memory-position': '0/1' });
    assert.deepEqual(await servedSince(d, before), { replica: 1, primary: 1 });
  });

  test('a node whose commits have no readable position reads the primary, never a replica that may lack them', async () => {
    // A role that owns its database but may not call pg_current_wal_flush_lsn() there: every
    // flush commits, then fails to read its position (as when the connection drops right after COMMIT).
    await primary.sql('CREATE ROLE ryw_blind LOGIN');
    await primary.sql('CREATE DATABASE ryw_blind OWNER ryw_blind');
    await primary.sql('REVOKE EXECUTE ON FUNCTION pg_current_wal_flush_lsn() FROM PUBLIC', 'ryw_blind');
    await caughtUp(); // the replica has the database before a node connects to it there
    const blind = (url: string) => url.replace(/\/\/[^@]+@/, '//ryw_blind@').replace(/\/postgres$/, '/ryw_blind');
    const c = await startNode({ SERVICE_DATABASE_URL: blind(primary.url), SERVICE_READ_DATABASE_URL: blind(replica.url) });
    const w = word();
    const before = await counts(c);
    await pause();
    try {
      const r = await post(c.base, '/v1/remember', { entity: 'ryw-blind', fact: `Erin wrote ${w}` });
      assert.equal(r.status, 201, 'the write commits and is acknowledged all the same');
      assert.equal(r.headers.get('memory-position'), null, 'no position to name');
      assert.deepEqual(await recalled(c, { query: w }), [r.body.id], 'the recall right after sees it');
      assert.deepEqual(await servedSince(c, before), { replica: 0, primary: 1 }, 'from the primary');
    } finally {
      await resume();
    }
  });
});
