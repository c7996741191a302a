// Surviving a PostgreSQL failover (issue 31), as an operator's drill runs one: a primary and a
// streaming replica from Debian's binaries, two service nodes as processes on them, writers and
// recallers on both nodes; the primary's WAL sender stalls (a slow network), then the primary's
// postmaster is killed (kill -9) and, a moment later, the replica is promoted, as a failover
// tool would. Shown: no node process exits; writes answer only 201 or 503 DATABASE_UNAVAILABLE
// with Retry-After; each node writes again within 2 s of the promotion; recall answers 200
// throughout; /v1/health says degraded during the outage; with synchronous replication not
// one acknowledged write is missing from the promoted server.
// And a replica killed under two synchronous standbys (ANY 1 (s1, s2)): recall never answers
// 5xx, and every write is acknowledged (the other standby confirms).
// FAILOVER_REPLICATION=async runs the first drill on asynchronous replication and reports the
// acknowledged writes lost (the figure docs/postgres-failover.md gives); it asserts no loss bound.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { exited, spawnService, type ServiceProcess } from './support/process.js';
import { postgresUnavailable, startPrimary, startReplica, type PgCluster } from './support/postgres.js';
import { post, tempDir } from './support/service.js';
import { countBy, Drill, percentile } from './support/failover-drill.js';

const unavailable = postgresUnavailable();
const ASYNC = process.env.FAILOVER_REPLICATION === 'async';
const DATABASE = 'failover';

/** Steady load before anything fails. */
const STEADY_MS = 1_500;
/** The WAL sender stopped this long before the kill: the replica falls behind, as over a slow link. */
const STALL_MS = 1_000;
/** From the kill to the promotion: the failover tool noticing. */
const DETECT_MS = 1_000;
/**
 * Longest a node may refuse writes after the promotion. The issue's bound is 2 s, checked by the
 * drill (FAILOVER_WINDOW_MS=2000); the suite's default leaves room for a loaded CI box.
 */
const WINDOW_MS = Number(process.env.FAILOVER_WINDOW_MS ?? 4_000);
/** Load after the promotion: past the window, so writes sent after it show the node is back. */
const AFTER_MS = WINDOW_MS + 2_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A URL naming `hosts` (in order) with the drill's database and `query`. */
const urlOf = (hosts: PgCluster[], query = '') => `postgres://memrt@${hosts.map((h) => `127.0.0.1:${h.port}`).join(',')}/${DATABASE}${query}`;

async function startNodes(count: number, env: Record<string, string>, dirs: string[], nodes: ServiceProcess[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const dir = tempDir('memrt-failover-');
    dirs.push(dir);
    nodes.push(await spawnService({ ...env, SERVICE_PATH: join(dir, 'memory.db'), SERVICE_POOL_THREADS: '2', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0' }));
  }
}

/** Waits until the primary lists `names` as synchronous (quorum) standbys. */
async function synchronous(primary: PgCluster, names: string[]): Promise<void> {
  const list = names.map((n) => `'${n}'`).join(',');
  for (let i = 0; i < 500; i++) {
    const quorum = await primary.sql(`SELECT count(*) FROM pg_stat_replication WHERE application_name IN (${list}) AND sync_state = 'quorum' AND state = 'streaming'`);
    if (Number(quorum) === names.length) return;
    await pause(20);
  }
  throw new Error(`standbys ${names.join(', ')} did not become synchronous`);
}

/** A first write and recall on each node: its cold start (models, plans) is not the drill's to measure. */
async function warmUp(nodes: ServiceProcess[]): Promise<void> {
  await Promise.all(nodes.map(async (node) => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await post(node.base, '/v1/remember', { entity: 'warm-up', fact: `Warm-up fact ${i}` })).status, 201);
      assert.equal((await post(node.base, '/v1/recall', { query: 'Warm-up fact', limit: 5 })).status, 200);
    }
  }));
}

async function stopAll(nodes: ServiceProcess[], clusters: (PgCluster | undefined)[], dirs: string[]): Promise<void> {
  for (const node of nodes) {
    node.child.kill('SIGKILL');
    await exited(node.child);
  }
  for (const cluster of clusters) await cluster?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

describe(`a failover under two nodes (${ASYNC ? 'asynchronous' : 'synchronous'} replication): kill -9 of the primary, the replica promoted`, { skip: unavailable ?? false }, () => {
  let primary: PgCluster;
  let replica: PgCluster;
  const dirs: string[] = [];
  const nodes: ServiceProcess[] = [];

  before(async () => {
    primary = await startPrimary();
    replica = await startReplica(primary, { name: 's1' });
    await primary.sql(`CREATE DATABASE ${DATABASE}`);
    // Set after the base backup, so the replica does not inherit it: once promoted it has no standby to wait for.
    if (!ASYNC) {
      await primary.sql("ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (s1)'");
      await primary.sql('SELECT pg_reload_conf()');
      await synchronous(primary, ['s1']);
    }
    await startNodes(2, {
      // Both servers, the primary first: after the failover the writer finds the promoted one.
      SERVICE_DATABASE_URL: urlOf([primary, replica], '?target_session_attrs=primary'),
      SERVICE_READ_DATABASE_URL: urlOf([replica]),
    }, dirs, nodes);
    await warmUp(nodes);
  });

  after(() => stopAll(nodes, [replica, primary], dirs));

  test('no node exits; writes answer 201 or 503 with Retry-After and resume within 2 s of the promotion; recall answers 200 throughout; no acknowledged write lost', async () => {
    const drill = new Drill(nodes.map((n) => n.base));
    drill.start(4);
    await pause(STEADY_MS);
    // The WAL sender stops (SIGSTOP): what the primary commits now reaches the replica only if
    // commits wait for it (synchronous replication).
    const walSender = Number(await primary.sql("SELECT pid FROM pg_stat_replication WHERE application_name = 's1'"));
    process.kill(walSender, 'SIGSTOP');
    await pause(STALL_MS);
    const killedAt = performance.now();
    await primary.crash();
    process.kill(walSender, 'SIGKILL');
    await pause(DETECT_MS);
    await replica.promote();
    const promotedAt = performance.now();
    await pause(AFTER_MS);
    await drill.stop();

    for (const [i, node] of nodes.entries()) assert.equal(node.child.exitCode, null, `node ${i} exited:\n${node.output().slice(-3000)}`);

    const byStatus = countBy(drill.writes, (w) => w.status);
    const unexpected = drill.writes.filter((w) => w.status !== 201 && !(w.status === 503 && w.code === 'DATABASE_UNAVAILABLE' && w.retryAfter !== null));
    assert.deepEqual(unexpected.slice(0, 5), [], `writes answered only 201 or 503 DATABASE_UNAVAILABLE with Retry-After (by status: ${JSON.stringify(byStatus)})`);

    // Each node's unavailability after the promotion: until the last write it refused was sent
    // (every write sent later was acknowledged). Sent, not answered: a batch on this shared box
    // can take a second or more, which is not the failover's.
    const sentAt = (w: { at: number; ms: number }) => w.at - w.ms;
    const windows = nodes.map((_, node) => Math.max(0, ...drill.writes.filter((w) => w.node === node && w.status !== 201).map((w) => sentAt(w) - promotedAt)));
    const writesAgain = nodes.map((_, node) => drill.writes.some((w) => w.node === node && w.status === 201 && sentAt(w) > promotedAt + windows[node]!));
    // From WINDOW_MS after the promotion on, every write is acknowledged. The issue's bound is 2 s
    // (FAILOVER_WINDOW_MS=2000, how the drill is run for the figures in docs/postgres-failover.md);
    // in the suite the bound is a liveness check, since a loaded CI box stretches every batch.
    const lateFailures = drill.writes.filter((w) => sentAt(w) > promotedAt + WINDOW_MS && w.status !== 201);
    const writeMs = { p50: Math.round(percentile(drill.acknowledged.length ? drill.writes.filter((w) => w.status === 201).map((w) => w.ms) : [], 50)),
      max503: Math.round(Math.max(0, ...drill.writes.filter((w) => w.status === 503).map((w) => w.ms))) };
    const lastBeforeKill = nodes.map((_, node) => Math.max(...drill.acknowledged.filter((a) => a.node === node && a.at < killedAt).map((a) => a.at)));

    const recallsByStatus = countBy(drill.recalls, (r) => r.status);
    const afterPromote = drill.recalls.filter((r) => r.at > promotedAt).map((r) => r.ms);
    const duringOutage = drill.recalls.filter((r) => r.at > killedAt && r.at <= promotedAt);
    const degraded = drill.health.some((h) => h.at > killedAt && h.status === 'degraded');
    const healthAtEnd = nodes.map((_, node) => drill.health.filter((h) => h.node === node).at(-1)?.status);

    // What the promoted server holds of what was acknowledged.
    const held = new Set((await replica.sql('SELECT id FROM memories', DATABASE)).split('\n'));
    const lost = drill.acknowledged.filter((a) => !held.has(a.id));
    const lostAfterKill = lost.filter((a) => a.at >= killedAt - STALL_MS);

    const figures = {
      replication: ASYNC ? 'asynchronous' : 'synchronous',
      writes: byStatus,
      acknowledged: drill.acknowledged.length,
      acknowledgedLost: lost.length,
      lostAcknowledgedInLastMsBeforeKill: lost.length ? Math.round(killedAt - Math.min(...lost.map((a) => a.at))) : 0,
      windowAfterPromoteMs: windows.map(Math.round),
      writeMs,
      unavailableFromLastAckBeforeKillMs: nodes.map((_, node) => Math.round((drill.acknowledged.find((a) => a.node === node && a.at > promotedAt)?.at ?? NaN) - lastBeforeKill[node]!)),
      recalls: recallsByStatus,
      recallsDuringOutage: duringOutage.length,
      recallMsAfterPromote: { p50: Math.round(percentile(afterPromote, 50)), p99: Math.round(percentile(afterPromote, 99)), max: Math.round(Math.max(...afterPromote)) },
      healthDegradedSeen: degraded,
    };
    console.log(`# failover drill: ${JSON.stringify(figures)}`);
    if (process.env.FAILOVER_DEBUG) {
      const rel = (t: number) => Math.round(t - promotedAt);
      console.log(`# promoted at epoch ${Math.round(performance.timeOrigin + promotedAt)}; killed at ${rel(killedAt)}; writes: ${drill.writes.map((w) => `${w.node}:${rel(w.at)}:${w.status}:${Math.round(w.ms)}`).join(' ')}`);
      console.log(`# recalls: ${drill.recalls.map((w) => `${w.node}:${rel(w.at)}:${w.status}:${Math.round(w.ms)}`).join(' ')}`);
      for (const node of nodes) console.log(node.output().split('\n').filter((l) => /primary|replica|DATABASE/.test(l)).join('\n'));
    }

    assert.deepEqual(writesAgain, [true, true], 'each node acknowledged writes sent after the promotion');
    assert.ok(windows.every((w) => w <= WINDOW_MS), `each node writes again within ${WINDOW_MS} ms of the promotion: ${figures.windowAfterPromoteMs} ms`);
    assert.deepEqual(lateFailures.slice(0, 5), [], `every write sent ${WINDOW_MS} ms or more after the promotion is acknowledged`);
    assert.deepEqual(Object.keys(recallsByStatus), ['200'], `recall answered 200 throughout: ${JSON.stringify(recallsByStatus)}`);
    assert.ok(duringOutage.length > 0, 'recalls were answered while there was no primary');
    assert.ok(degraded, 'health said degraded during the outage');
    assert.deepEqual(healthAtEnd, ['ok', 'ok'], 'and ok again after it');
    if (!ASYNC) assert.deepEqual(lost, [], 'synchronous replication: every acknowledged write is on the promoted server');
    else assert.equal(lostAfterKill.length, lost.length, 'asynchronous: only writes acknowledged in the stall before the kill are lost');
  });
});

describe('a synchronous standby killed under ANY 1 (s1, s2)', { skip: unavailable ?? false }, () => {
  let primary: PgCluster;
  let s1: PgCluster;
  let s2: PgCluster;
  const dirs: string[] = [];
  const nodes: ServiceProcess[] = [];

  before(async () => {
    primary = await startPrimary();
    // One base backup at a time: two at once (each with a fast checkpoint) can have the second's
    // checkpoint remove a WAL segment the first is still streaming ("requested WAL segment …
    // has already been removed"), a failure of the set-up, not of the service.
    s1 = await startReplica(primary, { name: 's1' });
    s2 = await startReplica(primary, { name: 's2' });
    await primary.sql(`CREATE DATABASE ${DATABASE}`);
    await primary.sql("ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (s1, s2)'");
    await primary.sql('SELECT pg_reload_conf()');
    await synchronous(primary, ['s1', 's2']);
    // Recall reads s1, the standby that is killed.
    await startNodes(1, { SERVICE_DATABASE_URL: urlOf([primary]), SERVICE_READ_DATABASE_URL: urlOf([s1]) }, dirs, nodes);
    await warmUp(nodes);
  });

  after(() => stopAll(nodes, [s1, s2, primary], dirs));

  // A recall once hung here (about one run in six) on a replica connection the kill left with a
  // query that never settles: replica reads are bounded now (workers/postgres/replica.ts).
  test('recall never answers 5xx; every write is acknowledged', async () => {
    const drill = new Drill(nodes.map((n) => n.base));
    drill.start(4);
    await pause(STEADY_MS);
    const killedAt = performance.now();
    await s1.crash();
    await pause(2_000);
    await drill.stop();

    assert.equal(nodes[0]!.child.exitCode, null, 'the node is up');
    const writes = countBy(drill.writes, (w) => w.status);
    const recalls = countBy(drill.recalls, (r) => r.status);
    const afterKill = drill.recalls.filter((r) => r.at > killedAt).map((r) => r.ms);
    console.log(`# replica kill: ${JSON.stringify({ writes, recalls, recallMsAfterKill: { p50: Math.round(percentile(afterKill, 50)), max: Math.round(Math.max(...afterKill)) } })}`);
    assert.deepEqual(Object.keys(writes), ['201'], `every write acknowledged: ${JSON.stringify(writes)}`);
    assert.deepEqual(Object.keys(recalls), ['200'], `recall never failed: ${JSON.stringify(recalls)}\n${nodes[0]!.output().split('\n').filter((l) => !l.includes('"level":30')).join('\n').slice(-6000)}`);
    assert.ok(drill.writes.filter((w) => w.at > killedAt + 500).length > 0, 'writes went on after the standby died');
    const held = new Set((await primary.sql('SELECT id FROM memories', DATABASE)).split('\n'));
    assert.deepEqual(drill.acknowledged.filter((a) => !held.has(a.id)), []);
  });
});
