// DELETE /v1/entities/{name}, GET /v1/snapshots and the online restore on a service running on
// PostgreSQL (issue 16): the snapshot is rows written by the writer in the delete's own
// transaction, listed and restored from the tables, through the same HTTP API as on SQLite.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connectReader, type Sql } from '../src/workers/postgres/client.js';
import { PostgresReadPort } from '../src/workers/postgres/read-port.js';
import { RESTORE_CHUNK } from '../src/shared/snapshot-files.js';
import { PostgresClusterTurns } from '../src/core/cluster-turns.js';
import type { ServiceError } from '../src/shared/errors.js';
import { createLogger } from '../src/shared/logger.js';
import { postgresUnavailable, startPrimary, type PgCluster } from './support/postgres.js';
import { del, get, post, rememberMany, startTestService, UUID, type Reply, type TestService } from './support/service.js';
import { runCli } from './support/cli.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const unavailable = postgresUnavailable();
/**
 * Every service here on the hash embedder: nothing in this file is about USE-lite's ranking, and
 * with it the backfill of the 2,050 rows below held the restore that followed for over a minute.
 */
const HASH = { SERVICE_EMBEDDER: 'hash' };

describe('deletion snapshots on PostgreSQL', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let cluster: PgCluster;
  let t: TestService;
  let sql: Sql;

  before(async () => {
    cluster = await startPrimary();
    // A database of its own: no other test's rows.
    await cluster.sql('CREATE DATABASE deletion');
    const url = cluster.url.replace(/\/postgres$/, '/deletion');
    t = await startTestService({ SERVICE_DATABASE_URL: url, ...HASH });
    sql = connectReader(url, { max: 2 });
  });

  after(async () => {
    await sql?.end();
    await t?.close();
    await cluster?.stop();
  });

  const restore = (id: string) => post(t.base, `/v1/snapshots/${id}/restore`);
  const inspect = async (entity: string) => (await post(t.base, '/v1/inspect', { entity, limit: 1000 })).body;
  const idsOf = (memories: { id: string }[]) => memories.map((m) => m.id).sort();
  const snapshotRows = async (snapshotId: string) =>
    (await sql<{ id: string }[]>`SELECT memory->>'id' AS id FROM deletion_snapshot_memories WHERE snapshot_id = ${snapshotId}`).map((r) => r.id).sort();

  test('a delete removes the memories from recall and inspect; its snapshot is listed; a restore brings them back with their ids, twice changes nothing', async () => {
    const facts = await rememberMany(t.base, 'otter fan', 3, 'otter note');
    await post(t.base, '/v1/remember', { entity: 'bystander', fact: 'bystander keeps otter pictures' });
    const r = await del(t.base, '/v1/entities/otter%20fan');
    assert.equal(r.status, 200);
    assert.equal(r.body.forgotten_count, 3);
    const snapshot = r.body.snapshot;
    assert.match(snapshot.snapshot_id, UUID);
    assert.deepEqual({ ...snapshot, snapshot_id: 'id', captured_at: 'at' }, {
      snapshot_id: 'id', captured_at: 'at', format_version: 1, owner_only: true, memory_count: 3, episodic_count: 0, semantic_count: 3,
    });
    assert.ok(!Number.isNaN(Date.parse(snapshot.captured_at)));
    // Gone from every read, the entity itself too (as on SQLite); the other entity's memory stays.
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'otter fan' })).status, 404);
    const recalled = (await post(t.base, '/v1/recall', { query: 'otter note drawer', limit: 10 })).body.memories;
    assert.deepEqual(recalled.map((m: { content: string }) => m.content), ['bystander keeps otter pictures']);
    // The snapshot is rows, committed with the delete.
    assert.deepEqual(await snapshotRows(snapshot.snapshot_id), idsOf(facts));

    const listed = await get(t.base, '/v1/snapshots');
    assert.equal(listed.status, 200);
    const item = listed.body.snapshots.find((s: { snapshot_id: string }) => s.snapshot_id === snapshot.snapshot_id);
    assert.deepEqual(item, {
      snapshot_id: snapshot.snapshot_id, captured_at: snapshot.captured_at, namespace: 'default', entity: 'otter fan', memory_count: 3,
      counts: { episodic: 0, semantic: 3, procedural: 0 }, vectors: item.vectors, problem: null,
    });

    const first = await restore(snapshot.snapshot_id);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, { snapshot_id: snapshot.snapshot_id, namespace: 'default', entity: 'otter fan', restored_count: 3, already_present_count: 0 });
    const back = (await inspect('otter fan')).semantic;
    assert.deepEqual(idsOf(back), idsOf(facts));
    assert.deepEqual(back.map((m: { content: string }) => m.content).sort(), facts.map((f) => f.content).sort());
    const found = (await post(t.base, '/v1/recall', { query: 'otter note number 2 drawer 2', entity: 'otter fan', limit: 1 })).body.memories;
    assert.equal(found[0].id, facts[2].id);

    const stats = (await get(t.base, '/v1/stats')).body;
    const second = await restore(snapshot.snapshot_id);
    assert.deepEqual([second.status, second.body.restored_count, second.body.already_present_count], [200, 0, 3]);
    assert.deepEqual((await get(t.base, '/v1/stats')).body, stats);
    const upper = await restore(snapshot.snapshot_id.toUpperCase());
    assert.deepEqual([upper.status, upper.body.snapshot_id, upper.body.already_present_count], [200, snapshot.snapshot_id, 3]);
  });

  test('unknown entities and snapshots are 404; an entity without memories is deleted with no snapshot', async () => {
    const missing = await del(t.base, '/v1/entities/nobody-here');
    assert.deepEqual([missing.status, missing.body.code], [404, 'NOT_FOUND']);
    const unknown = await restore(randomUUID());
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'SNAPSHOT_NOT_FOUND']);
    const malformed = await restore('not-a-uuid');
    assert.deepEqual([malformed.status, malformed.body.code], [400, 'INVALID_VALUE']);
    // An entity that exists only as an episode's participant has no memories of its own yet.
    await post(t.base, '/v1/episodes/start', { participants: ['quiet-one'] });
    const empty = await del(t.base, '/v1/entities/quiet-one');
    assert.deepEqual([empty.status, empty.body], [200, { forgotten_count: 0 }]);
    // Its record and participation went all the same: it is unknown now.
    assert.equal((await del(t.base, '/v1/entities/quiet-one')).status, 404);
  });

  test('a snapshot taken in another namespace is refused with 409 SNAPSHOT_CONFLICT, as a foreign file is on SQLite; nothing is written', async () => {
    await post(t.base, '/v1/remember', { entity: 'far heron', fact: 'far heron fishes at dawn' });
    const snapshotId = (await del(t.base, '/v1/entities/far%20heron')).body.snapshot.snapshot_id;
    const other = await startTestService({ SERVICE_DATABASE_URL: t.service.config.postgres!.url, SERVICE_NAMESPACE: 'elsewhere', ...HASH });
    try {
      const statsBefore = (await get(other.base, '/v1/stats')).body;
      const refused = await post(other.base, `/v1/snapshots/${snapshotId}/restore`);
      assert.deepEqual([refused.status, refused.body.code], [409, 'SNAPSHOT_CONFLICT']);
      assert.match(refused.body.error, /default/, 'names the namespace it was taken in');
      assert.deepEqual((await get(other.base, '/v1/stats')).body, statsBefore);
      const [{ n }] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM memories WHERE content = 'far heron fishes at dawn'`;
      assert.equal(n, 0);
      // Not listed there either: the listing is the namespace's own.
      assert.ok(!(await get(other.base, '/v1/snapshots')).body.snapshots.some((s: { snapshot_id: string }) => s.snapshot_id === snapshotId));
    } finally {
      await other.close();
    }
    // Its own namespace restores it.
    assert.equal((await restore(snapshotId)).body.restored_count, 1);
  });

  /**
   * DELETE of `entity` while the rows `vanishing` are taken away under it: the test locks them, so
   * the writer's chunk waits on them after the pool listed them, then deletes them and commits —
   * the chunk finds them gone, as it would after another node's delete of the same rows.
   */
  async function deleteWhileRowsVanish(entity: string, vanishing: string[]) {
    const locker = connectReader(t.service.config.postgres!.url, { max: 1 });
    try {
      // The reply is wrapped: begin() would await a promise returned bare, and the writer waits for this commit.
      const { reply } = await locker.begin(async (tx) => {
        const locked = await tx`SELECT rowid FROM memories WHERE content = ANY(${vanishing}::text[]) FOR UPDATE`;
        assert.equal(locked.length, vanishing.length);
        const reply = del(t.base, `/v1/entities/${encodeURIComponent(entity)}`);
        const deadline = Date.now() + 30_000;
        while ((await sql`SELECT 1 FROM pg_stat_activity WHERE application_name = 'memory-runtime writer' AND wait_event_type = 'Lock'`).length === 0) {
          if (Date.now() > deadline) assert.fail('the writer never waited on the locked rows');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await tx`DELETE FROM memories WHERE content = ANY(${vanishing}::text[])`;
        return { reply };
      });
      return await reply;
    } finally {
      await locker.end();
    }
  }

  test('a snapshot counts the rows it copied: rows listed but gone by their chunk are not counted; none removed, no snapshot row', async () => {
    const facts = ['tern nests on the spit', 'tern dives for sprats', 'tern migrates in autumn'];
    for (const fact of facts) assert.equal((await post(t.base, '/v1/remember', { entity: 'tern watcher', fact })).status, 201);
    const r = await deleteWhileRowsVanish('tern watcher', [facts[1]!]);
    assert.equal(r.status, 200);
    assert.equal(r.body.forgotten_count, 2);
    assert.deepEqual([r.body.snapshot.memory_count, r.body.snapshot.semantic_count, r.body.snapshot.episodic_count], [2, 2, 0]);
    assert.equal((await snapshotRows(r.body.snapshot.snapshot_id)).length, 2);
    const listed = (await get(t.base, '/v1/snapshots')).body.snapshots.find((s: { snapshot_id: string }) => s.snapshot_id === r.body.snapshot.snapshot_id);
    assert.equal(listed.memory_count, r.body.snapshot.memory_count, 'the answer and the listing agree');

    const lone = 'plover runs along the tideline';
    assert.equal((await post(t.base, '/v1/remember', { entity: 'plover watcher', fact: lone })).status, 201);
    const none = await deleteWhileRowsVanish('plover watcher', [lone]);
    assert.deepEqual([none.status, none.body], [200, { forgotten_count: 0 }]);
    const [{ n }] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM deletion_snapshots WHERE entity->>'name' = 'plover watcher'`;
    assert.equal(n, 0, 'no empty snapshot');
  });

  test('cluster turns: a delete conflicts with another node\'s delete of its entity and with restores; refused after the wait; a crashed node\'s entry lapses', async () => {
    const [{ id: namespaceId }] = await sql<{ id: number }[]>`SELECT id FROM namespaces WHERE name = 'default'`;
    const url = t.service.config.postgres!.url;
    const quiet = createLogger('silent');
    const a = new PostgresClusterTurns(url, quiet, 400);
    const b = new PostgresClusterTurns(url, quiet, 400);
    try {
      const deleting = await a.take('default', 'turn-owl');
      // Another namespace's delete of a same-named entity, and its restores, do not conflict.
      await sql`INSERT INTO namespaces (name, created_at) VALUES ('other-tenant', 0) ON CONFLICT DO NOTHING`;
      await (await b.take('other-tenant', 'turn-owl')).release();
      await (await b.take('other-tenant', null)).release();
      // A namespace that does not exist has nothing to delete: no entry, no wait.
      await (await b.take('never-written', 'turn-owl')).release();
      await assert.rejects(b.take('default', 'turn-owl'), (e: ServiceError) => e.code === 'ENTITY_BUSY' && e.message.includes(a.node));
      await assert.rejects(b.take('default', null), (e: ServiceError) => e.code === 'RESTORE_BUSY');
      const other = await b.take('default', 'turn-lark');
      await other.release();
      // Released while the other node waits: it goes ahead.
      const waiting = b.take('default', 'turn-owl');
      await new Promise((resolve) => setTimeout(resolve, 100));
      await deleting.release();
      const next = await waiting;
      const restoring = a.take('default', null);
      await assert.rejects(restoring, (e: ServiceError) => e.code === 'RESTORE_BUSY');
      await next.release();
      assert.equal((await sql`SELECT 1 FROM open_deletions`).length, 0, 'every turn ended leaves no entry');

      // A node that died mid-delete: its entry's lease ran out. It is removed, and nobody waits on it.
      await sql`INSERT INTO open_deletions (id, namespace_id, entity, node, lease_until)
        VALUES ('crashed', ${namespaceId}, 'turn-owl', 'crashed-node', now() - interval '1 second')`;
      const afterCrash = await a.take('default', 'turn-owl');
      assert.deepEqual((await sql<{ node: string }[]>`SELECT node FROM open_deletions`).map((r) => r.node), [a.node]);
      await afterCrash.release();
      // One still within its lease holds the entity.
      await sql`INSERT INTO open_deletions (id, namespace_id, entity, node, lease_until)
        VALUES ('live', ${namespaceId}, 'turn-owl', 'busy-node', now() + interval '10 minutes')`;
      await assert.rejects(a.take('default', 'turn-owl'), (e: ServiceError) => e.code === 'ENTITY_BUSY' && e.message.includes('busy-node'));
      await sql`DELETE FROM open_deletions WHERE id = 'live'`;
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('two nodes: a delete in progress on one holds back the other node\'s delete of the same entity and its restores (they wait, then run)', async () => {
    const b = await startTestService({ SERVICE_DATABASE_URL: t.service.config.postgres!.url, ...HASH });
    try {
      const writersWaiting = async () => (await sql`SELECT 1 FROM pg_stat_activity WHERE application_name = 'memory-runtime writer' AND wait_event_type = 'Lock'`).length;
      /** Runs `during` while node A's DELETE of `entity` is held inside its first chunk (a row the test locks). */
      const whileDeleting = async (entity: string, during: () => Promise<void>) => {
        const locker = connectReader(t.service.config.postgres!.url, { max: 1 });
        try {
          const { reply } = await locker.begin(async (tx) => {
            await tx`SELECT m.rowid FROM memories m JOIN entities e ON e.id = m.entity_id WHERE e.name = ${entity} LIMIT 1 FOR UPDATE OF m`;
            const reply = del(t.base, `/v1/entities/${encodeURIComponent(entity)}`);
            const deadline = Date.now() + 30_000;
            while ((await writersWaiting()) === 0) {
              if (Date.now() > deadline) assert.fail('node A\'s delete never reached its rows');
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
            await during();
            const [open] = await sql<{ entity: string }[]>`SELECT entity FROM open_deletions`;
            assert.equal(open?.entity, entity, 'node A\'s delete is registered for the cluster');
            return { reply };
          });
          const answered = await reply;
          assert.equal(answered.status, 200);
          return answered.body;
        } finally {
          await locker.end();
        }
      };
      const settled = (promise: Promise<unknown>) => Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 1_000))]);

      for (let i = 0; i < 3; i++) assert.equal((await post(t.base, '/v1/remember', { entity: 'gull watcher', fact: `gull note ${i} on the harbour wall` })).status, 201);
      let onB!: Promise<Reply>;
      const first = await whileDeleting('gull watcher', async () => {
        onB = del(b.base, '/v1/entities/gull%20watcher');
        assert.equal(await settled(onB), false, 'node B\'s delete waits');
        // Node A's writer waits on the locked row, holding the namespace's write lock; node B's
        // would wait on that lock once B began.
        assert.equal(await writersWaiting(), 1, 'node B has not begun its delete');
      });
      assert.equal(first.forgotten_count, 3);
      const second = await onB;
      // Node A removed the entity with its memories: node B, running after it, finds no entity.
      assert.deepEqual([second.status, second.body.code], [404, 'NOT_FOUND'], 'node B deleted after node A, finding nothing left');

      // A restore on node B waits for node A's delete of any entity.
      assert.equal((await post(t.base, '/v1/remember', { entity: 'gannet watcher', fact: 'gannet plunges into the swell' })).status, 201);
      const gannet = (await del(t.base, '/v1/entities/gannet%20watcher')).body.snapshot.snapshot_id;
      assert.equal((await post(t.base, '/v1/remember', { entity: 'skua watcher', fact: 'skua chases the terns' })).status, 201);
      let restoring!: Promise<Reply>;
      await whileDeleting('skua watcher', async () => {
        restoring = post(b.base, `/v1/snapshots/${gannet}/restore`);
        assert.equal(await settled(restoring), false, 'node B\'s restore waits');
        assert.equal(await writersWaiting(), 1, 'node B has not begun its restore');
        const [{ n }] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM memories WHERE content = 'gannet plunges into the swell'`;
        assert.equal(n, 0, 'nothing restored while node A deletes');
      });
      const restored = await restoring;
      assert.deepEqual([restored.status, restored.body.restored_count], [200, 1]);
      assert.equal((await sql`SELECT 1 FROM open_deletions`).length, 0);
    } finally {
      await b.close();
    }
  });

  test('a participant\'s delete takes the episode turns it took part in; the restore puts them back', async () => {
    await post(t.base, '/v1/remember', { entity: 'paddler', fact: 'paddler owns a red canoe' });
    const episode = (await post(t.base, '/v1/episodes/start', { participants: ['paddler', 'guide-bot'] })).body.episode_id;
    await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'paddling to the lighthouse tomorrow' });
    await post(t.base, `/v1/episodes/${episode}/message`, { role: 'assistant', content: 'take a spare paddle' });
    const r = await del(t.base, '/v1/entities/paddler');
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.forgotten_count, r.body.snapshot.episodic_count, r.body.snapshot.semantic_count], [3, 2, 1]);
    assert.equal((await post(t.base, '/v1/recall', { query: 'lighthouse paddle', limit: 5 })).body.memories.length, 0);
    const back = await restore(r.body.snapshot.snapshot_id);
    assert.deepEqual([back.status, back.body.restored_count], [200, 3]);
    const turns = (await post(t.base, '/v1/recall', { query: 'paddling to the lighthouse', limit: 1 })).body.memories;
    assert.equal(turns[0].content, 'paddling to the lighthouse tomorrow');
    assert.deepEqual((await inspect('paddler')).episodic.map((m: { episode_id: string }) => m.episode_id), [episode, episode]);
  });

  test('a delete that fails leaves no snapshot rows; one cut midway deleted only rows it copied; both restore', async () => {
    // A row PostgreSQL refuses to delete: the delete's command fails inside its transaction.
    await sql.unsafe(`CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by test'; END $$`);
    await sql.unsafe(`CREATE TRIGGER refuse_delete BEFORE DELETE ON memories FOR EACH ROW
      WHEN (OLD.content LIKE '%kept by the trigger%') EXECUTE FUNCTION refuse_delete()`);
    try {
      await post(t.base, '/v1/remember', { entity: 'stubborn', fact: 'stubborn is kept by the trigger' });
      const failed = await del(t.base, '/v1/entities/stubborn');
      assert.ok(failed.status >= 500, `status ${failed.status}`);
      assert.equal((await inspect('stubborn')).semantic.length, 1);
      const [{ n }] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM deletion_snapshots WHERE entity->>'name' = 'stubborn'`;
      assert.equal(n, 0, 'no snapshot header without its rows');

      // More rows than one writer command takes (2,000), the refused one last.
      const facts = await rememberMany(t.base, 'hoarder', 2_050, 'hoarder box');
      const keeper = (await post(t.base, '/v1/remember', { entity: 'hoarder', fact: 'hoarder box kept by the trigger' })).body;
      const cut = await del(t.base, '/v1/entities/hoarder');
      assert.ok(cut.status >= 500, `status ${cut.status}`);
      const [header] = await sql<{ snapshot_id: string }[]>`SELECT snapshot_id FROM deletion_snapshots WHERE entity->>'name' = 'hoarder'`;
      assert.ok(header, 'the chunks that committed left their snapshot');
      const left = (await sql<{ id: string }[]>`SELECT id FROM memories WHERE content LIKE 'hoarder box%'`).map((r) => r.id).sort();
      const copied = await snapshotRows(header.snapshot_id);
      assert.ok(copied.length > 0 && left.length > 1);
      // Every row is either still there or in the snapshot, never both, never neither.
      assert.ok(left.includes(keeper.id));
      assert.deepEqual([...copied, ...left].sort(), idsOf([...facts, keeper]));
      assert.equal(new Set([...copied, ...left]).size, copied.length + left.length);
      const back = await restore(header.snapshot_id);
      assert.deepEqual([back.status, back.body.restored_count, back.body.already_present_count], [200, copied.length, 0]);
      assert.equal((await inspect('hoarder')).semantic.length, 1000); // inspect's limit
    } finally {
      await sql.unsafe('DROP TRIGGER refuse_delete ON memories');
      await sql.unsafe('DROP FUNCTION refuse_delete()');
    }

    // Without the trigger: all 2,051 rows go in one delete and come back in several restore chunks.
    const whole = await del(t.base, '/v1/entities/hoarder');
    assert.equal(whole.status, 200);
    assert.equal(whole.body.forgotten_count, 2_051);
    assert.equal((await snapshotRows(whole.body.snapshot.snapshot_id)).length, 2_051);
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'hoarder' })).status, 404);
    const commandsBefore = t.service.writer.stats.commands;
    const back = await restore(whole.body.snapshot.snapshot_id);
    assert.deepEqual([back.status, back.body.restored_count, back.body.already_present_count], [200, 2_051, 0]);
    assert.ok(t.service.writer.stats.commands - commandsBefore >= Math.ceil(2_051 / RESTORE_CHUNK.memories), 'restored over several commands');
    const recalled = (await post(t.base, '/v1/recall', { query: 'hoarder box number 2049 drawer 2049', entity: 'hoarder', limit: 1 })).body.memories;
    assert.equal(recalled[0].content, 'hoarder box number 2049 is kept in drawer 2049');
  });

  test('the CLI on PostgreSQL: snapshots lists the tables, restore goes through the service, file commands refuse', async () => {
    await post(t.base, '/v1/remember', { entity: 'cli-heron', fact: 'cli-heron nests by the weir' });
    const snapshotId = (await del(t.base, '/v1/entities/cli-heron')).body.snapshot.snapshot_id;
    const env = { SERVICE_DATABASE_URL: t.service.config.postgres!.url, SERVICE_PATH: t.service.config.dbPath };
    const listed = await runCli(['snapshots', '--json'], { env });
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(lines, (await get(t.base, '/v1/snapshots')).body.snapshots);
    assert.ok(lines.some((s: { snapshot_id: string }) => s.snapshot_id === snapshotId));

    const restored = await runCli(['restore', snapshotId, '--url', t.base], { env });
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal((await inspect('cli-heron')).semantic.length, 1);
    // Without an address there is nothing to restore through: refused, nothing written.
    const nowhere = await runCli(['restore', snapshotId], { env: { ...env, SERVICE_PATH: join(t.dir, 'elsewhere.db') } });
    assert.notEqual(nowhere.code, 0);
    assert.match(nowhere.stderr, /SERVICE_DATABASE_URL/);

    // The commands that open the SQLite file refuse: the service does not use it.
    const file = join(t.dir, 'export.jsonl');
    for (const args of [['export', '-o', file], ['import', file], ['reembed']]) {
      const r = await runCli(args, { env });
      assert.notEqual(r.code, 0, args[0]);
      assert.match(r.stderr, /SERVICE_DATABASE_URL/, args[0]);
    }
    assert.ok(!existsSync(file));
  });

  test('the port reads a stored snapshot in chunks of at most 500 memories or about 4 MiB, in rowid order', async () => {
    const [{ id: namespaceId }] = await sql<{ id: number }[]>`SELECT id FROM namespaces WHERE name = 'default'`;
    const port = new PostgresReadPort(sql, namespaceId, 'default', { minSimilarity: 0.2 });
    const snapshotId = randomUUID();
    await sql`INSERT INTO deletion_snapshots (snapshot_id, namespace_id, captured_at, entity, embedder)
      VALUES (${snapshotId}, ${namespaceId}, ${new Date().toISOString()}, ${sql.json({ id: 'e-big', name: 'big', kind: 'person' })}, NULL)`;
    const memory = (rowid: number, padding: number) => ({
      rowid, id: `big-${rowid}`, memory_type: 'semantic', content: `big ${rowid}`, confidence: 0.5, stability: 1, created_at: 1,
      entity_id: 'e-big', episode_id: null, links: [], embedding: null, padding: 'x'.repeat(padding),
    });
    // 6 rows of 1 MiB (cut by bytes: 4 before the 4 MiB mark, then 2) and 600 small ones (cut by count).
    const rows = [...Array.from({ length: 6 }, (_, i) => memory(i + 1, 1 << 20)), ...Array.from({ length: 600 }, (_, i) => memory(100 + i, 0))];
    for (const m of rows) await sql`INSERT INTO deletion_snapshot_memories (snapshot_id, memory_rowid, memory) VALUES (${snapshotId}, ${m.rowid}, ${sql.json(m)})`;
    const sizes: number[] = [];
    const read: number[] = [];
    for (let after: number | null = 0; after !== null;) {
      const chunk = await port.snapshotMemories(snapshotId, after);
      sizes.push(chunk.memories.length);
      read.push(...chunk.memories.map((m) => Number((m as Record<string, unknown>).rowid)));
      after = chunk.next;
    }
    assert.deepEqual(sizes, [4, 2 + 498, 102]);
    assert.deepEqual(read, rows.map((m) => m.rowid));
    assert.equal((await port.checkSnapshot(snapshotId)).entity.name, 'big');
    // A damaged row is refused by the check, before a restore would write anything.
    await sql`UPDATE deletion_snapshot_memories SET memory = memory - 'content' WHERE snapshot_id = ${snapshotId} AND memory_rowid = 650`;
    const stats = (await get(t.base, '/v1/stats')).body;
    const refused = await restore(snapshotId);
    assert.deepEqual([refused.status, refused.body.code], [409, 'SNAPSHOT_UNUSABLE']);
    assert.deepEqual((await get(t.base, '/v1/stats')).body, stats);
    const [{ n }] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM memories WHERE id LIKE 'big-%'`;
    assert.equal(n, 0);
  });
});
