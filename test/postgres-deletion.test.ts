// DELETE /v1/entities/{name}, GET /v1/snapshots and the online restore on a service running on
// PostgreSQL (issue 16): the snapshot is rows written by the writer in the delete's own
// transaction, listed and restored from the tables, through the same HTTP API as on SQLite.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connectReader, type Sql } from '../src/workers/postgres/client.js';
import { PostgresReadPort } from '../src/workers/postgres/read-port.js';
import { RESTORE_CHUNK } from '../src/shared/snapshot-files.js';
import { postgresUnavailable, startPrimary, type PgCluster } from './support/postgres.js';
import { del, get, post, startTestService, UUID, type TestService } from './support/service.js';
import { runCli } from './support/cli.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const unavailable = postgresUnavailable();

describe('deletion snapshots on PostgreSQL', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let cluster: PgCluster;
  let t: TestService;
  let sql: Sql;

  before(async () => {
    cluster = await startPrimary();
    // A database of its own: no other test's rows.
    await cluster.sql('CREATE DATABASE deletion');
    const url = cluster.url.replace(/\/postgres$/, '/deletion');
    t = await startTestService({ SERVICE_DATABASE_URL: url });
    sql = connectReader(url, { max: 2 });
  });

  after(async () => {
    await sql?.end();
    await t?.close();
    await cluster?.stop();
  });

  /** Stores `count` facts about `entity` (32 at a time) and returns them in order. */
  async function rememberMany(entity: string, count: number, prefix: string): Promise<{ id: string; content: string }[]> {
    const stored: { id: string; content: string }[] = [];
    for (let i = 0; i < count; i += 32) {
      const batch = Array.from({ length: Math.min(32, count - i) }, (_, k) =>
        post(t.base, '/v1/remember', { entity, fact: `${prefix} number ${i + k} is kept in drawer ${i + k}` }));
      for (const r of await Promise.all(batch)) {
        assert.equal(r.status, 201);
        stored.push(r.body);
      }
    }
    return stored;
  }

  const restore = (id: string) => post(t.base, `/v1/snapshots/${id}/restore`);
  const inspect = async (entity: string) => (await post(t.base, '/v1/inspect', { entity, limit: 1000 })).body;
  const idsOf = (memories: { id: string }[]) => memories.map((m) => m.id).sort();
  const snapshotRows = async (snapshotId: string) =>
    (await sql<{ id: string }[]>`SELECT memory->>'id' AS id FROM deletion_snapshot_memories WHERE snapshot_id = ${snapshotId}`).map((r) => r.id).sort();

  test('a delete removes the memories from recall and inspect; its snapshot is listed; a restore brings them back with their ids, twice changes nothing', async () => {
    const facts = await rememberMany('otter fan', 3, 'otter note');
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
    // Gone from every read; the entity itself stays (as on SQLite), the other entity's memory too.
    assert.deepEqual((await inspect('otter fan')).semantic, []);
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
      const facts = await rememberMany('hoarder', 2_050, 'hoarder box');
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
    assert.equal((await inspect('hoarder')).semantic.length, 0);
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
