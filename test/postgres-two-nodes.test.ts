// Two service nodes on one PostgreSQL database (issue 16): each is its own process with its own
// writer thread and pool, both write the same namespace (their batches serialise on the
// namespace's advisory lock), and recall reads a streaming replica made with pg_basebackup -R.
// Shown: concurrent creates of one entity across both nodes agree on one id; writes through
// either node are recallable from both; kill -9 of a node mid-stream loses nothing it
// acknowledged. Read-your-writes, on a replica made provably stale, is shown in
// test/postgres-read-your-writes.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { exited, spawnService, type ServiceProcess } from './support/process.js';
import { postgresUnavailable, startPrimary, startReplica, type PgCluster } from './support/postgres.js';
import { parseSamples, sample } from './support/prometheus.js';
import { del, get, post, tempDir, UUID } from './support/service.js';
import { createDatabase } from './support/test-backend.js';

const unavailable = postgresUnavailable();

/** Runs `work` over items with at most `width` in flight; results in item order. */
async function inParallel<T, R>(items: T[], width: number, work: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!, i);
    }
  }));
  return results;
}

/** A word no other fact holds, so a recall of it finds exactly its fact. */
const marker = (prefix: string, i: number) => `${prefix}${i.toString(36)}q`;

describe('two service nodes on one PostgreSQL database', { skip: unavailable ?? false }, () => {
  let primary: PgCluster;
  let replica: PgCluster;
  let env: Record<string, string>;
  const nodes: ServiceProcess[] = [];

  /** A node: a service process with a local folder of its own, on the shared database. */
  async function startNode(): Promise<ServiceProcess> {
    const dir = tempDir('memrt-node-');
    const node = await spawnService({ ...env, SERVICE_PATH: join(dir, 'memory.db'), SERVICE_POOL_THREADS: '2', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0' });
    nodes.push(node);
    return node;
  }

  before(async () => {
    primary = await startPrimary();
    replica = await startReplica(primary);
    // A generous replay wait: on this shared box a replica can fall some way behind, and recall
    // should keep reading it (not the primary) while still seeing every write — the 1,000-recall
    // pass below checks the replica served.
    env = { ...(await createDatabase(primary.url, replica.url, 'two_nodes')), SERVICE_READ_MAX_LAG_MS: '10000' };
    await startNode();
    await startNode();
  });

  after(async () => {
    for (const node of nodes) {
      node.child.kill('SIGKILL');
      await exited(node.child);
    }
    await replica?.stop();
    await primary?.stop();
  });

  test('200 concurrent creates of one entity across both nodes answer one id', async () => {
    const [a, b] = nodes;
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      post((i % 2 ? b : a)!.base, '/v1/entities', { name: 'shared-team', kind: 'team' })));
    assert.deepEqual([...new Set(replies.map((r) => r.status))], [201]);
    const ids = new Set(replies.map((r) => r.body.id));
    assert.equal(ids.size, 1);
    assert.match([...ids][0], UUID);
    for (const node of [a!, b!]) assert.equal((await get(node.base, '/v1/stats')).body.entities, 1);
  });

  test("an entity deleted on one node is created anew by the other node's POST /v1/entities (not answered from its cache)", async () => {
    const [a, b] = nodes;
    const first = await post(b!.base, '/v1/entities', { name: 'cached-wren', kind: 'team' });
    assert.equal(first.status, 201);
    // b has it cached now (it created it); a deletes it.
    assert.equal((await del(a!.base, '/v1/entities/cached-wren')).status, 200);
    const again = await post(b!.base, '/v1/entities', { name: 'cached-wren', kind: 'team' });
    assert.equal(again.status, 201);
    assert.notEqual(again.body.id, first.body.id, 'a new entity, not the deleted one');
    // The entity b answered for exists (a reads a replica: wait for it to replay b's write).
    const listed = async () => (await get(a!.base, '/v1/entities?q=cached-wren')).body.entities.some((e: { name: string }) => e.name === 'cached-wren');
    for (let i = 0; i < 150 && !(await listed()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(await listed(), 'the entity b answered for exists');
  });

  test('1,000 remembers split across both nodes are all readable from both and recallable from the other node', async () => {
    const [a, b] = nodes;
    const stored = await inParallel(Array.from({ length: 1000 }, (_, i) => i), 32, async (i) => {
      const r = await post((i % 2 ? b : a)!.base, '/v1/remember', { entity: `member-${i % 20}`, fact: `Shared fact ${marker('zk', i)} from node ${i % 2 ? 'b' : 'a'}` });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      const position = r.headers.get('memory-position');
      assert.ok(position, 'every write names its commit position');
      return { id: r.body.id as string, position };
    });
    assert.equal(new Set(stored.map((s) => s.id)).size, 1000);
    // Every fact through the recall path of the node that did not write it (the cross-node case,
    // with the writing node's Memory-Position; 2,000 recalls would double the test's time for
    // little more), and every fact in both nodes' reads.
    /** Recall snapshots the replica served, over both nodes. */
    const replicaServed = async () => {
      let served = 0;
      for (const node of [a!, b!]) served += sample(parseSamples((await get(node.base, '/metrics')).body), 'memory_runtime_recall_snapshots_total', { side: 'replica' });
      return served;
    };
    const replicaBefore = await replicaServed();
    const missing = (await inParallel(stored, 16, async ({ id, position }, i) => {
      const r = await post((i % 2 ? a : b)!.base, '/v1/recall', { query: marker('zk', i), limit: 3 }, { 'memory-position': position });
      assert.equal(r.status, 200);
      return r.body.memories.some((m: { id: string }) => m.id === id) ? null : i;
    })).filter((i) => i !== null);
    assert.deepEqual(missing, [], 'recalled from the other node');
    // Each recall carries a position and its node's own last commit, so the replica serves once it
    // has replayed them (any that waited past SERVICE_READ_MAX_LAG_MS went to the primary).
    assert.ok(await replicaServed() > replicaBefore, 'the replica served recalls');
    for (const node of [a!, b!]) {
      const seen = new Set<string>();
      for (let e = 0; e < 20; e++) {
        for (const m of (await post(node.base, '/v1/inspect', { entity: `member-${e}`, limit: 1000 })).body.semantic) seen.add(m.id);
      }
      assert.deepEqual(stored.filter(({ id }) => !seen.has(id)), [], `inspected on node ${node === a ? 'a' : 'b'}`);
      assert.equal((await get(node.base, '/v1/stats')).body.semantic_memories, 1000);
    }
  });

  test('kill -9 of one node mid-stream loses no acknowledged write', async () => {
    const [a, b] = nodes;
    const acknowledged: { id: string; entity: string }[] = [];
    let bAnswered = 0;
    let killed = false;
    const stream = inParallel(Array.from({ length: 600 }, (_, i) => i), 16, async (i) => {
      const onB = i % 2 === 1;
      const entity = `stream-${i % 10}`;
      try {
        const r = await post((onB ? b : a)!.base, '/v1/remember', { entity, fact: `Streamed fact ${marker('st', i)}` });
        if (r.status === 201) acknowledged.push({ id: r.body.id, entity });
        if (onB && ++bAnswered === 100 && !killed) {
          killed = true;
          b!.child.kill('SIGKILL'); // writes of B's in flight now have no answer: their outcome is unknown
        }
      } catch {
        assert.ok(onB && killed, 'only requests to the killed node fail');
      }
    });
    await stream;
    await exited(b!.child);
    assert.ok(killed && acknowledged.length >= 300 + 100, `${acknowledged.length} acknowledged`);

    const held = new Set<string>();
    for (let e = 0; e < 10; e++) {
      const r = await post(a!.base, '/v1/inspect', { entity: `stream-${e}`, limit: 1000 });
      for (const m of r.body.semantic) held.add(m.id);
    }
    const lost = acknowledged.filter((w) => !held.has(w.id));
    assert.deepEqual(lost, [], 'every acknowledged write is in the database');

    // A node started in the killed one's place serves them all too.
    const c = await startNode();
    assert.equal((await post(c.base, '/v1/recall', { query: marker('st', 0), limit: 3 })).status, 200);
    assert.ok((await get(c.base, '/v1/stats')).body.semantic_memories >= 1000 + acknowledged.length);
  });
});
