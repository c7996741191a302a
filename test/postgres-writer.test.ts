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
import { toWireError } from '../src/shared/errors.js';
import { postgresBackend, run, type OpenStore } from './support/store-backends.js';
import { startReplica, type PgCluster } from './support/postgres.js';
import { openPostgresWriteStore } from '../src/writer/postgres/adapter.js';
import { connectWriter } from '../src/writer/postgres/connect.js';

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
    const other = await opened.another();
    const create = (store: typeof other) => run(store, { type: 'ensureEntity', name: 'Shared', kind: 'user' });
    // Each node runs its flushes one at a time (as the writer thread does); the two nodes race.
    const ids = await Promise.all([sequential(100, () => create(opened.store)), sequential(100, () => create(other))]);
    assert.equal(new Set(ids.flat().map((e) => e.id)).size, 1);
    const [count] = await opened.rows<{ n: number }>('SELECT count(*) AS n FROM entities WHERE name = ?', 'Shared');
    assert.equal(count!.n, 1);
  });

  test('1,000 remembers split across two nodes are all stored, rowids unique and following commit order', async () => {
    const other = await opened.another();
    const facts = (node: string) => Array.from({ length: 500 }, (_, i) => ({ type: 'remember' as const, entity: 'Fleet', fact: `${node} fact ${i}`, confidence: 1 }));
    const flush = async (store: typeof other, commands: ReturnType<typeof facts>) => {
      for (let i = 0; i < commands.length; i += 50) {
        const { replies } = await store.runBatch(commands.slice(i, i + 50).map((command, j) => ({ id: i + j, namespace: 'default', command })));
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

  test('the writer\'s session commits with synchronous_commit on, whatever the database default', async () => {
    const db = await backend.open();
    const plain = postgres(db.url!, { max: 1, onnotice: () => {} });
    const writer = connectWriter(db.url!);
    try {
      await db.cluster!.sql(`ALTER DATABASE ${db.url!.replace(/.*\//, '')} SET synchronous_commit = off`);
      const [{ synchronous_commit: other }] = await plain`SHOW synchronous_commit`;
      assert.equal(other, 'off');
      const [{ synchronous_commit: pinned }] = await writer`SHOW synchronous_commit`;
      assert.equal(pinned, 'on');
    } finally {
      await plain.end();
      await writer.end();
      await db.close();
    }
  });

  test('the namespace lock serialises flushes under a database default of repeatable read', async () => {
    const db = await backend.open();
    const nodes: Awaited<ReturnType<typeof openPostgresWriteStore>>[] = [];
    const holder = postgres(db.url!, { max: 1, onnotice: () => {} });
    try {
      await run(db.store, { type: 'ensureEntity', name: 'Dee', kind: 'user' });
      await db.cluster!.sql(`ALTER DATABASE ${db.url!.replace(/.*\//, '')} SET default_transaction_isolation = 'repeatable read'`);
      nodes.push(await openPostgresWriteStore(db.url!, db.config), await openPostgresWriteStore(db.url!, db.config));
      let pending: Promise<unknown>[] = [];
      // Both nodes queue behind the lock, so the second runs right after the first committed.
      await holder.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${PG_LOCK_CLASS.write}, ${db.store.namespaceId})`;
        pending = nodes.map((node) => run(node, { type: 'remember', entity: 'Dee', fact: 'Dee dives', confidence: 1 }));
        await new Promise((resolve) => setTimeout(resolve, 300));
      });
      const ids = await Promise.all(pending) as { id: string }[];
      assert.equal(new Set(ids.map((r) => r.id)).size, 1);
      const [count] = await db.rows<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE content = 'Dee dives'");
      assert.equal(count!.n, 1);
    } finally {
      await holder.end();
      for (const node of nodes) await node.close();
      await db.close();
    }
  });

  test('a flush whose WAL position cannot be read after COMMIT keeps its replies, its position reported unknown (null)', async () => {
    const store = (opened.store as unknown as { store: { sql: postgres.Sql & Record<string, unknown> } }).store;
    const real = store.sql;
    // The connection drops right after COMMIT (a failover): the position query fails.
    const dropped = Object.assign(() => Promise.reject(Object.assign(new Error('connection ended'), { code: 'CONNECTION_ENDED' })),
      { begin: real.begin.bind(real), end: real.end.bind(real) });
    store.sql = dropped as never;
    try {
      const outcome = await opened.store.runBatch([{ id: 1, namespace: 'default', command: { type: 'remember', entity: 'Ped', fact: 'Ped commits once', confidence: 1 } }]);
      assert.equal(outcome.replies[0]!.ok, true);
      // null, not absent: the node must read the primary until a later flush has a position
      // (core/node-position.ts); absent would leave its previous, older position in force.
      assert.equal(outcome.position, null);
    } finally {
      store.sql = real;
    }
    const [count] = await opened.rows<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE content = 'Ped commits once'");
    assert.equal(count!.n, 1);
  });

  test('an entity row gone from the database (failover to a replica without it, restore) is created again, not INTERNAL forever', async () => {
    await run(opened.store, { type: 'remember', entity: 'Cara', fact: 'Cara one', confidence: 1 });
    // What a promotion of a replica that lacked the commit looks like to the writer's entity cache.
    await opened.rows("DELETE FROM memories WHERE content = 'Cara one'");
    await opened.rows("DELETE FROM entities WHERE name = 'Cara'");
    for (const fact of ['Cara two', 'Cara three']) {
      const { replies } = await opened.store.runBatch([
        { id: 1, namespace: 'default', command: { type: 'remember', entity: 'Cara', fact, confidence: 1 } },
        { id: 2, namespace: 'default', command: { type: 'remember', entity: 'Cara neighbour', fact: `next to ${fact}`, confidence: 1 } },
      ]);
      assert.deepEqual(replies.map((r) => r.ok), [true, true]);
    }
    const [entity] = await opened.rows<{ n: number }>("SELECT count(*)::int AS n FROM entities WHERE name = 'Cara'");
    assert.equal(entity!.n, 1);
    const stored = await opened.rows("SELECT 1 FROM memories m JOIN entities e ON e.id = m.entity_id WHERE e.name = 'Cara'");
    assert.equal(stored.length, 2);
  });

  test('text with U+0000, which PostgreSQL cannot store, fails its command alone as INVALID_VALUE naming the field', async () => {
    const { replies } = await opened.store.runBatch([
      { id: 1, namespace: 'default', command: { type: 'remember', entity: 'Nul', fact: 'tab\u0000nul', confidence: 1 } },
      { id: 2, namespace: 'default', command: { type: 'remember', entity: 'A\u0000B', fact: 'name with NUL', confidence: 1 } },
      { id: 3, namespace: 'default', command: { type: 'remember', entity: 'Nul', fact: 'plain', confidence: 1 } },
      { id: 4, namespace: 'default', command: { type: 'startEpisode', participants: ['Nul', 'B\u0000'] } },
    ]);
    const failed = replies.map((r) => (r.ok ? 'ok' : `${r.error.code} ${r.error.message.split(':')[0]}`));
    assert.deepEqual(failed, ['INVALID_VALUE fact', 'INVALID_VALUE entity', 'ok', 'INVALID_VALUE participants[1]']);
    assert.equal((await opened.rows("SELECT 1 FROM memories WHERE content = 'plain'")).length, 1);
    assert.equal((await opened.rows("SELECT 1 FROM entities WHERE name LIKE 'A%B'")).length, 0);
  });

  test('PostgreSQL\'s disk_full (SQLSTATE 53100) is STORAGE_FULL, as SQLite\'s disk-full codes are', async () => {
    const server = postgres(opened.url!, { max: 1, onnotice: () => {} });
    try {
      const refused = await server`DO $$ BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = '53100'; END $$`.then(() => null, (error: unknown) => error);
      assert.equal((refused as { code?: string }).code, '53100');
      assert.equal(toWireError(refused).code, 'STORAGE_FULL');
    } finally {
      await server.end();
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

    test('a replica is fresh for a flush only once it has replayed past the flush position, and then sees its writes', async () => {
      const db = opened.url!.replace(/.*\//, '');
      const reader = postgres(replica.url.replace(/\/postgres$/, `/${db}`), { max: 1 });
      const until = async (what: string, done: () => Promise<boolean>) => {
        const deadline = Date.now() + 20_000;
        while (!(await done())) {
          assert.ok(Date.now() < deadline, what);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      try {
        // Replay paused: the flush reaches the replica's disk but not its tables.
        await reader`SELECT pg_wal_replay_pause()`;
        await until('replay did not pause', async () => (await reader`SELECT pg_get_wal_replay_pause_state() = 'paused' AS p`)[0]!.p);
        const { replies, position } = await opened.store.runBatch([{ id: 1, namespace: 'default', command: { type: 'remember', entity: 'Rae', fact: 'Rae reads replicas', confidence: 1 } }]);
        assert.ok(replies[0]!.ok);
        assert.match(position ?? '', /^[0-9A-F]+\/[0-9A-F]+$/);
        const fresh = async () => (await reader`SELECT pg_last_wal_replay_lsn() >= ${position!}::pg_lsn AS done`)[0]!.done as boolean;
        const seen = async () => (await reader`SELECT count(*)::int AS n FROM memories WHERE content = 'Rae reads replicas'`)[0]!.n as number;
        assert.equal(await fresh(), false, 'a replica that has not replayed the flush counts as fresh');
        assert.equal(await seen(), 0);
        await reader`SELECT pg_wal_replay_resume()`;
        await until('the replica did not replay up to the flush position', fresh);
        assert.equal(await seen(), 1);
      } finally {
        await reader`SELECT pg_wal_replay_resume()`.catch(() => {});
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
