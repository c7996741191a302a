// What only the PostgreSQL adapter of the store port promises (issue 16), on a private cluster
// with a streaming replica: a namespace's flushes serialise across nodes on an advisory lock, two
// writer nodes on one database agree on entities and lose no write, a delete copies its rows into
// the snapshot tables in its own transaction, and a flush's WAL position gives read-your-writes
// on a replica.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { PG_LOCK_CLASS } from '../src/shared/postgres-schema.js';
import { postgresBackend, run, type OpenStore } from './support/store-backends.js';
import { startReplica, type PgCluster } from './support/postgres.js';

const backend = postgresBackend();

describe('PostgreSQL writer adapter', { skip: backend.unavailable ?? false }, () => {
  let opened: OpenStore;
  before(async () => {
    await backend.start();
    opened = await backend.open();
  });
  after(async () => {
    await opened?.close();
    await backend.stop();
  });

  test('200 concurrent creates of one entity across two writer nodes make one entity', async () => {
    const other = await opened.secondNode!();
    const create = (store: typeof other) => run(store, { type: 'ensureEntity', name: 'Shared', kind: 'user' });
    // Each node runs its flushes one at a time (as the writer thread does); the two nodes race.
    const ids = await Promise.all([sequential(100, () => create(opened.store)), sequential(100, () => create(other))]);
    assert.equal(new Set(ids.flat().map((e) => e.id)).size, 1);
    const [count] = await opened.rows<{ n: number }>('SELECT count(*) AS n FROM entities WHERE name = ?', 'Shared');
    assert.equal(count!.n, 1);
  });

  test('1,000 remembers split across two nodes are all stored, rowids unique and following commit order', async () => {
    const other = await opened.secondNode!();
    const facts = (node: string) => Array.from({ length: 500 }, (_, i) => ({ type: 'remember' as const, entity: 'Fleet', fact: `${node} fact ${i}`, confidence: 1 }));
    const flush = async (store: typeof other, commands: ReturnType<typeof facts>) => {
      for (let i = 0; i < commands.length; i += 50) {
        const { replies } = await store.runBatch(commands.slice(i, i + 50).map((command, j) => ({ id: i + j, command })));
        assert.ok(replies.every((r) => r.ok));
      }
    };
    await Promise.all([flush(opened.store, facts('a')), flush(other, facts('b'))]);
    const stored = await opened.rows<{ rowid: number; xmin: string }>(
      "SELECT rowid, xmin::text AS xmin FROM memories WHERE content LIKE '_ fact %' ORDER BY rowid");
    assert.equal(stored.length, 1_000);
    // Flushes serialise on the namespace lock, so one flush's rows are contiguous in rowid order:
    // a transaction id never reappears after another one's rows.
    const order = stored.map((r) => r.xmin).filter((x, i, all) => i === 0 || all[i - 1] !== x);
    assert.equal(new Set(order).size, order.length, 'the flushes of the two nodes interleave inside the rowid order');
  });

  test('a flush waits for the namespace lock another node holds', async () => {
    const holder = postgres(opened.url!, { max: 1, onnotice: () => {} });
    try {
      let committed = false;
      let pending: Promise<unknown> | undefined;
      await holder.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${PG_LOCK_CLASS.write}, ${opened.store.namespaceId})`;
        pending = run(opened.store, { type: 'remember', entity: 'Locked', fact: 'waits', confidence: 1 }).then(() => { committed = true; });
        // Give the flush every chance to commit while the lock is held.
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(committed, false);
        const [seen] = await tx`SELECT count(*)::int AS n FROM memories WHERE content = 'waits'`;
        assert.equal(seen!.n, 0);
      });
      await pending;
      assert.equal(committed, true);
    } finally {
      await holder.end();
    }
  });

  test('forgetRows copies each deleted row (columns, links, vector) into the snapshot tables in its own transaction', async () => {
    const kept = await run(opened.store, { type: 'remember', entity: 'Quinn', fact: 'Quinn rows boats', confidence: 0.8 });
    const [row] = await opened.rows<{ rowid: number }>('SELECT rowid FROM memories WHERE id = ?', kept.id);
    const vector = new Float32Array(512);
    vector[7] = 1;
    await run(opened.store, { type: 'attachVectors', items: [{ rowid: row!.rowid, vector, cell: 0, mentionedEntityIds: [] }] });
    const quinn = await run(opened.store, { type: 'ensureEntity', name: 'Quinn', kind: 'user' });
    await assert.rejects(run(opened.store, { type: 'forgetRows', rows: [[row!.rowid, kept.id]] }), { code: 'INTERNAL' },
      'without a snapshot to copy into, nothing is deleted');
    assert.equal((await opened.rows('SELECT 1 FROM memories WHERE id = ?', kept.id)).length, 1);
    const snapshotId = randomUUID();
    await run(opened.store, {
      type: 'forgetRows', rows: [[row!.rowid, kept.id]],
      snapshot: { format_version: 1, snapshot_id: snapshotId, captured_at: new Date().toISOString(), namespace: 'default', entity: quinn, embedder: 'use-lite-512' },
    });
    assert.equal((await opened.rows('SELECT 1 FROM memories WHERE id = ?', kept.id)).length, 0);
    const [copy] = await opened.rows<{ memory: Record<string, unknown> }>('SELECT memory FROM deletion_snapshot_memories WHERE snapshot_id = ?', snapshotId);
    const memory = copy!.memory;
    assert.equal(memory.id, kept.id);
    assert.equal(memory.content, 'Quinn rows boats');
    assert.equal(memory.confidence, 0.8);
    assert.deepEqual(memory.links, [{ entity_id: quinn.id, relation: 'owner' }]);
    assert.equal((memory.embedding as number[])[7], 1);
    const [snapshot] = await opened.rows<{ entity: { name: string } }>('SELECT entity FROM deletion_snapshots WHERE snapshot_id = ?', snapshotId);
    assert.equal(snapshot!.entity.name, 'Quinn');
  });

  describe('with a streaming replica', () => {
    let replica: PgCluster;
    before(async () => {
      replica = await startReplica(opened.cluster!);
    });
    after(async () => {
      await replica?.stop();
    });

    test('a replica that has replayed up to the flush position sees its writes', async () => {
      const { replies, position } = await opened.store.runBatch([{ id: 1, command: { type: 'remember', entity: 'Rae', fact: 'Rae reads replicas', confidence: 1 } }]);
      assert.ok(replies[0]!.ok);
      assert.match(position ?? '', /^[0-9A-F]+\/[0-9A-F]+$/);
      const db = opened.url!.replace(/.*\//, '');
      const reader = postgres(replica.url.replace(/\/postgres$/, `/${db}`), { max: 1 });
      try {
        const deadline = Date.now() + 20_000;
        for (;;) {
          const [replayed] = await reader`SELECT pg_last_wal_replay_lsn() >= ${position!}::pg_lsn AS done`;
          if (replayed!.done) break;
          assert.ok(Date.now() < deadline, 'the replica did not replay up to the flush position');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const [seen] = await reader`SELECT count(*)::int AS n FROM memories WHERE content = 'Rae reads replicas'`;
        assert.equal(seen!.n, 1);
      } finally {
        await reader.end();
      }
    });
  });
});

async function sequential<T>(times: number, step: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < times; i++) out.push(await step());
  return out;
}
