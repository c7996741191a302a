// The store port's contract (issue 16): the same writer commands, run through the port, behave
// the same on both adapters — SQLite (a file per test) and PostgreSQL (a private cluster for
// this file, a database per test). Behaviour is asserted through command results and the rows
// they leave, read back with plain SQL both engines understand.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import type { SnapshotHeaderT, SnapshotFileT } from '../src/shared/file-formats.js';
import { FIRST_USE_KIND } from '../src/shared/schemas.js';
import { postgresBackend, run, runBatch, sqliteBackend, type Backend, type OpenStore } from './support/store-backends.js';

const DIMS = 512; // the default embedder's (use-lite-512): the writer checks vectors against it

function unitVector(seed: number): Float32Array {
  const v = new Float32Array(DIMS);
  v[seed % DIMS] = 1;
  return v;
}

function header(entity: { id: string; name: string; kind: string }): SnapshotHeaderT {
  return { format_version: 1, snapshot_id: randomUUID(), captured_at: new Date().toISOString(), namespace: 'default', entity, embedder: 'use-lite-512' };
}

for (const backend of [sqliteBackend(), postgresBackend()]) contract(backend);

function contract(backend: Backend): void {
  describe(`store port contract: ${backend.name}`, { skip: backend.unavailable ?? false }, () => {
    before(() => backend.start());
    after(() => backend.stop());

    /** A fresh store for one test, closed whatever happens. */
    async function withStore(body: (s: OpenStore) => Promise<void>): Promise<void> {
      const opened = await backend.open();
      try {
        await body(opened);
      } finally {
        await opened.close();
      }
    }

    test('ensureEntity gets or creates by name; the first kind stays', () => withStore(async ({ store }) => {
      const first = await run(store, { type: 'ensureEntity', name: 'Alice', kind: 'user' });
      const again = await run(store, { type: 'ensureEntity', name: 'Alice', kind: 'team' });
      assert.equal(again.id, first.id);
      assert.equal(again.kind, 'user');
      const other = await run(store, { type: 'ensureEntity', name: 'alice', kind: 'user' });
      assert.notEqual(other.id, first.id, 'names are case-sensitive identifiers');
    }));

    test('remember creates the entity on first use and de-duplicates a repeated fact, keeping the stronger confidence', () => withStore(async ({ store, rows }) => {
      const stored = await run(store, { type: 'remember', entity: 'Bob', fact: 'Bob likes tea.', confidence: 0.6 });
      assert.equal(stored.memory_type, 'semantic');
      const repeated = await run(store, { type: 'remember', entity: 'Bob', fact: '  bob LIKES tea ', confidence: 0.9 });
      assert.equal(repeated.id, stored.id);
      assert.equal(repeated.confidence, 0.9);
      const lower = await run(store, { type: 'remember', entity: 'Bob', fact: 'Bob likes tea', confidence: 0.2 });
      assert.equal(lower.confidence, 0.9);
      const memories = await rows<{ id: string; confidence: number }>('SELECT id, confidence FROM memories');
      assert.deepEqual(memories, [{ id: stored.id, confidence: 0.9 }]);
      const [entity] = await rows<{ kind: string }>('SELECT kind FROM entities WHERE name = ?', 'Bob');
      assert.equal(entity!.kind, FIRST_USE_KIND);
      const links = await rows<{ relation: string }>('SELECT relation FROM memory_entities');
      assert.deepEqual(links.map((l) => l.relation), ['owner']);
    }));

    test('each request names its namespace: one flush may serve several; a command that stores nothing creates none (issue 25)', () => withStore(async ({ store, rows }) => {
      const outcome = await store.runBatch([
        { id: 1, namespace: 'tenant-a', command: { type: 'remember', entity: 'Ann', fact: 'Ann rows boats', confidence: 0.7 } },
        { id: 2, namespace: 'tenant-b', command: { type: 'remember', entity: 'Ann', fact: 'Ann rows boats', confidence: 0.7 } },
        { id: 3, namespace: 'tenant-a', command: { type: 'remember', entity: 'Ann', fact: 'Ann rows boats', confidence: 0.9 } },
        // Reads and deletes of a namespace that does not exist find nothing and leave no row behind.
        { id: 4, namespace: 'nobody', command: { type: 'addMessage', episodeId: randomUUID(), role: 'user', content: 'hello' } },
        { id: 5, namespace: 'nobody', command: { type: 'forgetBegin', deletionId: 77, entity: 'Ann' } },
        { id: 6, namespace: 'nobody', command: { type: 'forgetEnd', deletionId: 77 } },
      ]);
      const [a, b, again, message] = outcome.replies;
      assert.ok(a!.ok && b!.ok && again!.ok);
      const id = (reply: typeof a) => (reply as { result: { id: string } }).result.id;
      assert.notEqual(id(a), id(b), 'the same fact in two namespaces is two memories');
      assert.equal(id(again), id(a), 'de-duplication stays inside the namespace');
      assert.equal(message!.ok, false);
      const names = (await rows<{ name: string }>('SELECT name FROM namespaces ORDER BY name')).map((row) => row.name);
      assert.deepEqual(names, ['default', 'tenant-a', 'tenant-b']);
      const perNamespace = await rows<{ name: string; n: number }>(
        'SELECT n.name AS name, count(*) AS n FROM memories m JOIN namespaces n ON n.id = m.namespace_id GROUP BY n.name ORDER BY n.name');
      assert.deepEqual(perNamespace.map((row) => [row.name, Number(row.n)]), [['tenant-a', 1], ['tenant-b', 1]]);
    }));

    test('a failing command is undone alone; its neighbours in the flush commit', () => withStore(async ({ store, rows }) => {
      const { replies } = await runBatch(store, [
        { type: 'remember', entity: 'Carol', fact: 'first', confidence: 1 },
        { type: 'addMessage', episodeId: randomUUID(), role: 'user', content: 'to nowhere' },
        { type: 'remember', entity: 'Carol', fact: 'second', confidence: 1 },
      ]);
      assert.deepEqual(replies.map((r) => r.ok), [true, false, true]);
      assert.deepEqual(replies.map((r) => r.id), [1, 2, 3]);
      const failed = replies[1]!;
      assert.equal(failed.ok ? null : failed.error.code, 'NOT_FOUND');
      const contents = await rows<{ content: string }>('SELECT content FROM memories ORDER BY rowid');
      assert.deepEqual(contents.map((r) => r.content), ['first', 'second']);
    }));

    test('one flush of remembers sees its own earlier commands: duplicates, supersession, a failing neighbour (PostgreSQL reads them ahead)', () => withStore(async ({ store, rows }) => {
      // Entities known (cached) and facts stored by an earlier flush. Eli's values each from a
      // moment of their own (two from the same millisecond would stand side by side).
      const tea = await run(store, { type: 'remember', entity: 'Dana', fact: 'Dana likes tea', confidence: 0.5 });
      const rome = await run(store, { type: 'remember', entity: 'Eli', fact: 'Eli lives in Rome', confidence: 0.5, validFrom: 1_600_000_000_000 });
      await run(store, { type: 'remember', entity: 'Finn', fact: 'Finn likes jazz', confidence: 0.5 });
      const flush = async (commands: Parameters<typeof runBatch>[1]) => (await runBatch(store, commands)).replies
        .map((r) => (r.ok ? r.result as { id: string; confidence: number; valid_until?: string | null; superseded_by?: string | null } : r.error.code));
      const [again, paris, danaCoffee, danaCoffeeAgain, madrid, jazz] = await flush([
        { type: 'remember', entity: 'Dana', fact: 'dana LIKES tea', confidence: 0.7 },
        { type: 'remember', entity: 'Eli', fact: 'Eli lives in Paris', confidence: 0.9, validFrom: 1_700_000_000_000 },
        { type: 'remember', entity: 'Dana', fact: 'Dana likes coffee', confidence: 0.6 },
        { type: 'remember', entity: 'Dana', fact: 'Dana likes coffee', confidence: 0.8 },
        { type: 'remember', entity: 'Eli', fact: 'Eli lives in Madrid', confidence: 0.9, validFrom: 1_710_000_000_000 },
        { type: 'remember', entity: 'Finn', fact: 'Finn likes jazz', confidence: 0.9 },
      ]) as { id: string; confidence: number; superseded_by?: string | null }[];
      assert.equal(again!.id, tea.id, 'a fact stored by an earlier flush is a duplicate');
      assert.equal(again!.confidence, 0.7);
      assert.equal(danaCoffeeAgain!.id, danaCoffee!.id, 'a fact stored earlier in the same flush is a duplicate');
      assert.equal(danaCoffeeAgain!.confidence, 0.8);
      assert.equal(jazz!.confidence, 0.9);
      const eli = await rows<{ id: string; superseded_by: string | null }>(
        "SELECT m.id, m.superseded_by FROM memories m JOIN entities e ON e.id = m.entity_id WHERE e.name = 'Eli' ORDER BY m.rowid");
      assert.deepEqual(eli, [{ id: rome.id, superseded_by: paris!.id }, { id: paris!.id, superseded_by: madrid!.id }, { id: madrid!.id, superseded_by: null }]);
      // A failing command: the flush runs again, each command from it on in a savepoint.
      const replies = await flush([
        { type: 'remember', entity: 'Finn', fact: 'Finn likes jazz', confidence: 1 },
        { type: 'remember', entity: 'Dana', fact: 'Dana likes tea', confidence: 0.9 },
        { type: 'remember', entity: 'Eli', fact: 'Eli lives in Oslo', confidence: 0.9, validFrom: 1_720_000_000_000 },
        { type: 'addMessage', episodeId: randomUUID(), role: 'user', content: 'to nowhere' },
      ]);
      assert.equal(replies[3], 'NOT_FOUND');
      const [finn, danaTea, oslo] = replies as { id: string; confidence: number }[];
      assert.deepEqual([finn!.confidence, danaTea!.id, danaTea!.confidence], [1, tea.id, 0.9]);
      const current = await rows<{ id: string }>(
        "SELECT m.id FROM memories m JOIN entities e ON e.id = m.entity_id WHERE e.name = 'Eli' AND m.superseded_by IS NULL");
      assert.deepEqual(current, [{ id: oslo!.id }]);
      const [count] = await rows<{ n: number }>('SELECT count(*) AS n FROM memories');
      assert.equal(Number(count!.n), 7);
    }));

    test('a NUL fact in a read-ahead flush fails alone (4xx), its neighbours (another namespace) commit', () => withStore(async ({ store, rows }) => {
      await run(store, { type: 'remember', entity: 'Dana', fact: 'Dana likes tea', confidence: 0.5 });
      await run(store, { type: 'remember', entity: 'Eli', fact: 'Eli likes jazz', confidence: 0.5 });
      const outcome = await store.runBatch([
        { id: 1, namespace: store.namespace, command: { type: 'remember', entity: 'Dana', fact: 'Dana likes \u0000 coffee', confidence: 0.7 } },
        { id: 2, namespace: store.namespace, command: { type: 'remember', entity: 'Eli', fact: 'Eli likes rock', confidence: 0.7 } },
        { id: 3, namespace: 'tenant-z', command: { type: 'remember', entity: 'Zed', fact: 'Zed likes rock', confidence: 0.7 } },
      ]);
      // SQLite stores U+0000; PostgreSQL refuses it for that command alone (writer/postgres/unstorable.ts).
      const pg = backend.name.includes('postgres');
      assert.deepEqual(outcome.replies.map((r) => r.ok), [!pg, true, true]);
      const failed = outcome.replies[0]!;
      if (pg) assert.equal(failed.ok ? null : failed.error.code, 'INVALID_VALUE');
      const [count] = await rows<{ n: number }>('SELECT count(*) AS n FROM memories');
      assert.equal(Number(count!.n), pg ? 4 : 5);
    }));

    test('a new value supersedes every value valid at its start across timeline pages (> 16 rows), in one flush and after', () => withStore(async ({ store, rows }) => {
      const cities = Array.from({ length: 21 }, (_, i) => `City${String.fromCharCode(97 + i)}town`);
      // Side by side: same moment, so none supersedes another.
      await runBatch(store, cities.map((c) => ({ type: 'remember' as const, entity: 'Eli', fact: `Eli lives in ${c}`, confidence: 0.5, validFrom: 1_600_000_000_000 })));
      await runBatch(store, [{ type: 'remember', entity: 'Ann', fact: 'Ann likes tea', confidence: 0.5 }]);
      const { replies } = await runBatch(store, [
        { type: 'remember', entity: 'Ann', fact: 'Ann likes coffee', confidence: 0.5 },
        { type: 'remember', entity: 'Eli', fact: 'Eli lives in Rome', confidence: 0.9, validFrom: 1_700_000_000_000 },
        { type: 'remember', entity: 'Eli', fact: 'Eli lives in Oslo', confidence: 0.9, validFrom: 1_650_000_000_000 },
      ]);
      assert.ok(replies.every((r) => r.ok));
      const [, rome, oslo] = replies.map((r) => (r as { result: { id: string; valid_until: string | null; superseded_by: string | null } }).result);
      assert.equal(oslo!.superseded_by, rome!.id);
      const current = await rows<{ content: string }>("SELECT m.content FROM memories m JOIN entities e ON e.id = m.entity_id WHERE e.name = 'Eli' AND m.superseded_by IS NULL");
      assert.deepEqual(current.map((r) => r.content), ['Eli lives in Rome']);
      const byOslo = await rows<{ n: number }>('SELECT count(*) AS n FROM memories WHERE superseded_by = ?', oslo!.id);
      assert.equal(Number(byOslo[0]!.n), 21);
    }));

    test('rowids grow in commit order and are never reused after a delete', () => withStore(async ({ store, rows }) => {
      await run(store, { type: 'remember', entity: 'Dan', fact: 'one', confidence: 1 });
      await run(store, { type: 'remember', entity: 'Dan', fact: 'two', confidence: 1 });
      const before = await rows<{ rowid: number; id: string }>('SELECT rowid, id FROM memories ORDER BY rowid');
      assert.ok(before[1]!.rowid > before[0]!.rowid);
      const dan = await run(store, { type: 'ensureEntity', name: 'Dan', kind: 'user' });
      await run(store, { type: 'forgetBegin', deletionId: 1, entity: 'Dan' });
      const last = before[1]!;
      await run(store, { type: 'forgetRows', rows: [[last.rowid, last.id]], snapshot: header(dan) });
      await run(store, { type: 'forgetEnd', deletionId: 1 });
      await run(store, { type: 'remember', entity: 'Dan', fact: 'three', confidence: 1 });
      const [three] = await rows<{ rowid: number }>('SELECT rowid FROM memories WHERE content = ?', 'three');
      assert.ok(three!.rowid > last.rowid, `rowid ${three!.rowid} reuses or precedes the deleted ${last.rowid}`);
    }));

    test('an episode stores each message at once, with the previous turn as context and participant links', () => withStore(async ({ store, rows }) => {
      const { episode_id } = await run(store, { type: 'startEpisode', participants: ['Eve', 'Frank'] });
      await run(store, { type: 'addMessage', episodeId: episode_id, role: 'user', content: 'Where do you live?' });
      await run(store, { type: 'addMessage', episodeId: episode_id, role: 'assistant', content: 'In Lisbon.' });
      const turns = await rows<{ seq: number; role: string; context: string; memory_type: string }>(
        'SELECT seq, role, context, memory_type FROM memories WHERE episode_id = ? ORDER BY seq', episode_id);
      assert.deepEqual(turns, [
        { seq: 0, role: 'user', context: '', memory_type: 'episodic' },
        { seq: 1, role: 'assistant', context: 'Where do you live?', memory_type: 'episodic' },
      ]);
      const links = await rows<{ n: number }>("SELECT count(*) AS n FROM memory_entities WHERE relation = 'participant'");
      assert.equal(Number(links[0]!.n), 4);
      const [episode] = await rows<{ message_count: number }>('SELECT message_count FROM episodes WHERE id = ?', episode_id);
      assert.equal(episode!.message_count, 2);
    }));

    test('ending an episode stores extracted memories with owner and mention links; it ends once', () => withStore(async ({ store, rows }) => {
      const { episode_id } = await run(store, { type: 'startEpisode', participants: ['Gina'] });
      await run(store, { type: 'addMessage', episodeId: episode_id, role: 'user', content: 'Gina works with Hal.' });
      const [turn] = await rows<{ id: string }>('SELECT id FROM memories WHERE episode_id = ?', episode_id);
      const ended = await run(store, {
        type: 'endEpisode', episodeId: episode_id, outcome: 'success', sourceIds: [turn!.id],
        memories: [
          { content: 'Gina works with Hal', memory_type: 'semantic', confidence: 0.8, extraction_tier: 1, entities: ['Gina', 'Hal'] },
          { content: 'no owner', memory_type: 'semantic', confidence: 0.8, extraction_tier: 1, entities: [] },
        ],
      });
      assert.equal(ended.memories_created, 1);
      const links = await rows<{ name: string; relation: string }>(`SELECT e.name, me.relation FROM memory_entities me
        JOIN entities e ON e.id = me.entity_id JOIN memories m ON m.rowid = me.memory_rowid
        WHERE m.memory_type = 'semantic' ORDER BY e.name`);
      assert.deepEqual(links.map((l) => `${l.name}:${l.relation}`), ['Gina:owner', 'Hal:mention']);
      await assert.rejects(run(store, { type: 'endEpisode', episodeId: episode_id, outcome: null, memories: [], sourceIds: [] }), { code: 'NOT_FOUND' });
      await assert.rejects(run(store, { type: 'addMessage', episodeId: episode_id, role: 'user', content: 'late' }), { code: 'NOT_FOUND' });
    }));

    test('extraction output whose source turn was deleted meanwhile is not stored', () => withStore(async ({ store, rows }) => {
      const { episode_id } = await run(store, { type: 'startEpisode', participants: ['Ian'] });
      await run(store, { type: 'addMessage', episodeId: episode_id, role: 'user', content: 'Ian owns a boat.' });
      const [turn] = await rows<{ rowid: number; id: string }>('SELECT rowid, id FROM memories');
      const ian = await run(store, { type: 'ensureEntity', name: 'Ian', kind: 'user' });
      await run(store, { type: 'forgetBegin', deletionId: 7, entity: 'Ian' });
      await run(store, { type: 'forgetRows', rows: [[turn!.rowid, turn!.id]], snapshot: header(ian) });
      await run(store, { type: 'forgetEnd', deletionId: 7 });
      const ended = await run(store, {
        type: 'endEpisode', episodeId: episode_id, outcome: null, sourceIds: [turn!.id],
        memories: [{ content: 'Ian owns a boat', memory_type: 'semantic', confidence: 1, extraction_tier: 1, entities: ['Ian'] }],
      });
      assert.equal(ended.memories_created, 0);
      assert.equal((await rows('SELECT id FROM memories')).length, 0);
    }));

    test('while a delete is open, its rows are no duplicates and extraction from them stores nothing', () => withStore(async ({ store, rows }) => {
      const kept = await run(store, { type: 'remember', entity: 'Jo', fact: 'Jo skis', confidence: 1 });
      await run(store, { type: 'forgetBegin', deletionId: 3, entity: 'Jo' });
      const during = await run(store, { type: 'remember', entity: 'Jo', fact: 'Jo skis', confidence: 1 });
      assert.notEqual(during.id, kept.id, 'a fact repeated during the delete gets a row of its own');
      await run(store, { type: 'forgetEnd', deletionId: 3 });
      const after = await run(store, { type: 'remember', entity: 'Jo', fact: 'Jo skis', confidence: 1 });
      assert.equal(after.id, kept.id, 'once the delete is closed, the older row is the duplicate again');
      assert.equal((await rows('SELECT id FROM memories')).length, 2);
    }));

    test('a flush with a failing command gives the others the results of their order, open deletes included', () => withStore(async ({ store, rows }) => {
      const kept = await run(store, { type: 'remember', entity: 'Bob', fact: 'Bob skis', confidence: 0.5 });
      const missing = randomUUID();
      const { replies } = await runBatch(store, [
        { type: 'remember', entity: 'Bob', fact: 'Bob skis', confidence: 0.9 },
        { type: 'forgetBegin', deletionId: 42, entity: 'Bob' },
        { type: 'addMessage', episodeId: missing, role: 'user', content: 'no such episode' },
      ]);
      assert.deepEqual(replies.map((r) => r.ok), [true, true, false]);
      assert.equal(replies[0]!.ok && (replies[0]!.result as { id: string }).id, kept.id, 'the delete opened after it does not hold the row');
      assert.equal((await rows('SELECT id FROM memories')).length, 1);
      await run(store, { type: 'forgetEnd', deletionId: 42 });

      const { episode_id } = await run(store, { type: 'startEpisode', participants: ['Bob'] });
      await run(store, { type: 'addMessage', episodeId: episode_id, role: 'user', content: 'Alice moved to Oslo.' });
      const [turn] = await rows<{ id: string }>('SELECT id FROM memories WHERE episode_id = ?', episode_id);
      const ended = await runBatch(store, [
        { type: 'endEpisode', episodeId: episode_id, outcome: null, sourceIds: [turn!.id],
          memories: [{ content: 'Alice lives in Oslo', memory_type: 'semantic', confidence: 1, extraction_tier: 1, entities: ['Alice'] }] },
        { type: 'forgetBegin', deletionId: 43, entity: 'Bob' },
        { type: 'addMessage', episodeId: missing, role: 'user', content: 'no such episode' },
      ]);
      const [extracted] = ended.replies;
      assert.equal(extracted!.ok && (extracted!.result as { memories_created: number }).memories_created, 1);
      assert.equal((await rows("SELECT id FROM memories WHERE content = 'Alice lives in Oslo'")).length, 1);

      // A delete closed in a rolled-back attempt is still open when the flush runs again.
      const closing = await runBatch(store, [
        { type: 'forgetEnd', deletionId: 43 },
        { type: 'addMessage', episodeId: missing, role: 'user', content: 'no such episode' },
      ]);
      assert.deepEqual(closing.replies.map((r) => r.ok), [true, false]);
      const after = await run(store, { type: 'remember', entity: 'Bob', fact: 'Bob skis', confidence: 1 });
      assert.equal(after.id, kept.id, 'the delete is closed once');
    }));

    test('forgetRows deletes exactly the listed rows (id-guarded) with links and vectors, and clears the next turn\'s context', () => withStore(async ({ store, rows }) => {
      const { episode_id } = await run(store, { type: 'startEpisode', participants: ['Kim'] });
      for (const content of ['a secret', 'reply', 'other']) await run(store, { type: 'addMessage', episodeId: episode_id, role: 'user', content });
      const turns = await rows<{ rowid: number; id: string }>('SELECT rowid, id FROM memories ORDER BY seq');
      await run(store, { type: 'attachVectors', items: [{ rowid: turns[0]!.rowid, vector: unitVector(1), cell: 0, mentionedEntityIds: [] }] });
      const kim = await run(store, { type: 'ensureEntity', name: 'Kim', kind: 'user' });
      await run(store, { type: 'forgetBegin', deletionId: 9, entity: 'Kim' });
      const step = await run(store, {
        type: 'forgetRows', snapshot: header(kim),
        rows: [[turns[0]!.rowid, turns[0]!.id], [turns[2]!.rowid, randomUUID()]],
      });
      await run(store, { type: 'forgetEnd', deletionId: 9 });
      const { copied, ...counts } = step;
      assert.deepEqual(counts, { processed: 2, removed: 1 });
      // PostgreSQL copies the removed rows into the snapshot tables in the same statement and says
      // how many of each type; SQLite's snapshot file was written before, so it reports none.
      if (backend.name === 'postgres') assert.deepEqual(copied, { episodic: 1, semantic: 0, procedural: 0 });
      else assert.equal(copied, undefined);
      const left = await rows<{ content: string; context: string }>('SELECT content, context FROM memories ORDER BY seq');
      assert.deepEqual(left, [{ content: 'reply', context: '' }, { content: 'other', context: 'reply' }]);
      assert.equal((await rows('SELECT rowid FROM memory_vectors')).length, 0);
      assert.equal((await rows('SELECT memory_rowid FROM memory_entities WHERE memory_rowid = ?', turns[0]!.rowid)).length, 0);
      const again = await run(store, { type: 'forgetRows', snapshot: header(kim), rows: [[turns[0]!.rowid, turns[0]!.id]] });
      assert.deepEqual({ ...again, copied: undefined }, { processed: 1, removed: 0, copied: undefined });
    }));

    test('restoreRows puts memories back with their id, columns, links and vector; twice changes nothing', () => withStore(async ({ store, rows }) => {
      const leo = await run(store, { type: 'ensureEntity', name: 'Leo', kind: 'user' });
      const snapshot = header(leo);
      const memory = {
        id: randomUUID(), memory_type: 'semantic', content: 'Leo plays chess', content_key: 'leo plays chess',
        confidence: 0.7, stability: 12.5, difficulty: 5, access_count: 3, last_access_at: 1_700_000_000_000,
        created_at: 1_690_000_000_000, archived: 0, extraction_tier: 2, entity_id: leo.id, episode_id: null, seq: null, role: null,
        links: [{ entity_id: leo.id, relation: 'owner' }], embedding: Array.from(unitVector(5)),
      } as SnapshotFileT['memories'][number];
      const first = await run(store, { type: 'restoreRows', snapshot, memories: [memory] });
      assert.deepEqual(first, { processed: 1, restored: 1, present: 0 });
      const [row] = await rows<Record<string, unknown>>(`SELECT id, confidence, stability, access_count, created_at, extraction_tier,
        entity_id, embedded FROM memories`);
      assert.deepEqual({ ...row }, {
        id: memory.id, confidence: 0.7, stability: 12.5, access_count: 3, created_at: 1_690_000_000_000, extraction_tier: 2,
        entity_id: leo.id, embedded: 1,
      });
      const [vector] = await rows<{ embedding: Uint8Array }>('SELECT embedding FROM memory_vectors');
      assert.deepEqual(new Float32Array(new Uint8Array(vector!.embedding).buffer), unitVector(5));
      assert.equal((await rows("SELECT 1 FROM memory_entities WHERE relation = 'owner'")).length, 1);
      const second = await run(store, { type: 'restoreRows', snapshot, memories: [memory] });
      assert.deepEqual(second, { processed: 1, restored: 0, present: 1 });
    }));

    test('restoring a memory whose id another namespace holds is a conflict and changes nothing', () => withStore(async ({ store, rows, another }) => {
      const elsewhere = await another({ SERVICE_NAMESPACE: 'elsewhere' });
      const taken = await run(elsewhere, { type: 'remember', entity: 'Uma', fact: 'Uma lives elsewhere', confidence: 1 });
      const uma = { id: randomUUID(), name: 'Uma', kind: 'user' };
      const memory = {
        id: taken.id, memory_type: 'semantic', content: 'Uma lives here', content_key: 'uma lives here',
        confidence: 1, stability: 1, difficulty: 5, access_count: 0, last_access_at: 1, created_at: 1, archived: 0,
        extraction_tier: 1, entity_id: uma.id, episode_id: null, seq: null, role: null, links: [], embedding: null,
      } as SnapshotFileT['memories'][number];
      await assert.rejects(run(store, { type: 'restoreRows', snapshot: header(uma), memories: [memory] }), { code: 'SNAPSHOT_CONFLICT' });
      const here = await rows<{ n: number }>('SELECT count(*) AS n FROM memories WHERE namespace_id = ?', store.namespaceId);
      assert.equal(Number(here[0]!.n), 0);
      assert.equal((await rows('SELECT id FROM entities WHERE namespace_id = ?', store.namespaceId)).length, 0, 'the recreated owner is rolled back too');
      assert.notEqual((await run(store, { type: 'ensureEntity', name: 'Uma', kind: 'user' })).id,
        (await run(elsewhere, { type: 'ensureEntity', name: 'Uma', kind: 'user' })).id, 'entity names are per namespace');
    }));

    test('attachVectors stores a vector once, in the unassigned cell without an index, and marks rejected texts', () => withStore(async ({ store, rows }) => {
      await run(store, { type: 'remember', entity: 'Mo', fact: 'first fact', confidence: 1 });
      await run(store, { type: 'remember', entity: 'Mo', fact: 'second fact', confidence: 1 });
      const [a, b] = await rows<{ rowid: number }>('SELECT rowid FROM memories ORDER BY rowid');
      const mo = await run(store, { type: 'ensureEntity', name: 'Other', kind: 'user' });
      const attached = await run(store, {
        type: 'attachVectors', unembeddable: [b!.rowid],
        items: [{ rowid: a!.rowid, vector: unitVector(2), cell: 99, mentionedEntityIds: [mo.id] }],
      });
      assert.equal(attached.attached, 1);
      const again = await run(store, { type: 'attachVectors', items: [{ rowid: a!.rowid, vector: unitVector(3), cell: 0, mentionedEntityIds: [] }] });
      assert.equal(again.attached, 0, 'an embedded row is skipped');
      const states = await rows<{ embedded: number; vector_cell: number }>('SELECT embedded, vector_cell FROM memories ORDER BY rowid');
      assert.deepEqual(states, [{ embedded: 1, vector_cell: 0 }, { embedded: -1, vector_cell: 0 }]);
      const [vector] = await rows<{ embedding: Uint8Array }>('SELECT embedding FROM memory_vectors WHERE rowid = ?', a!.rowid);
      assert.deepEqual(new Float32Array(new Uint8Array(vector!.embedding).buffer), unitVector(2));
      assert.equal((await rows("SELECT 1 FROM memory_entities WHERE relation = 'mention'")).length, 1);
    }));

    test('attachVectors with a vector of another length than the embedder\'s fails the command and stores none of it', () => withStore(async ({ store, rows }) => {
      const a = await run(store, { type: 'remember', entity: 'Vic', fact: 'Vic one', confidence: 1 });
      const b = await run(store, { type: 'remember', entity: 'Vic', fact: 'Vic two', confidence: 1 });
      const rowid = async (id: string) => (await rows<{ rowid: number }>('SELECT rowid FROM memories WHERE id = ?', id))[0]!.rowid;
      await assert.rejects(run(store, { type: 'attachVectors', items: [
        { rowid: await rowid(a.id), vector: unitVector(1), cell: 0, mentionedEntityIds: [] },
        { rowid: await rowid(b.id), vector: new Float32Array(DIMS - 1), cell: 0, mentionedEntityIds: [] },
      ] }), { code: 'INTERNAL' });
      assert.equal((await rows('SELECT rowid FROM memory_vectors')).length, 0);
      assert.equal((await rows('SELECT 1 FROM memories WHERE embedded = 0')).length, 2);
      // A memory already embedded is skipped before its vector is looked at, as on SQLite.
      await run(store, { type: 'attachVectors', items: [{ rowid: await rowid(a.id), vector: unitVector(1), cell: 0, mentionedEntityIds: [] }] });
      const skipped = await run(store, { type: 'attachVectors', items: [{ rowid: await rowid(a.id), vector: new Float32Array(3), cell: 0, mentionedEntityIds: [] }] });
      assert.equal(skipped.attached, 0);
    }));

    test('IVF generations: install, attach into a current cell, move stale vectors, retire the old generation', () => withStore(async ({ store, rows }) => {
      await run(store, { type: 'remember', entity: 'Ned', fact: 'early', confidence: 1 });
      await run(store, { type: 'remember', entity: 'Ned', fact: 'late', confidence: 1 });
      const [early, late] = await rows<{ rowid: number }>('SELECT rowid FROM memories ORDER BY rowid');
      const centroids = (n: number) => ({ count: n, dimensions: DIMS, data: new Float32Array(n * DIMS).map((_, i) => (i % DIMS === i / DIMS ? 1 : 0)) });
      const g1 = await run(store, { type: 'installVectorGeneration', trainedOn: 2, centroids: centroids(2) });
      assert.equal(g1.cells, 2);
      const cells1 = await rows<{ cell: number }>('SELECT cell FROM vector_cells WHERE generation = ? ORDER BY cell', g1.generation);
      await run(store, { type: 'attachVectors', items: [
        { rowid: early!.rowid, vector: unitVector(0), cell: cells1[0]!.cell, mentionedEntityIds: [] },
        { rowid: late!.rowid, vector: unitVector(1), cell: 0, mentionedEntityIds: [] },
      ] });
      assert.deepEqual((await rows<{ vector_cell: number }>('SELECT vector_cell FROM memories ORDER BY rowid')).map((r) => r.vector_cell), [cells1[0]!.cell, 0]);
      const g2 = await run(store, { type: 'installVectorGeneration', trainedOn: 2, centroids: centroids(2) });
      const cells2 = await rows<{ cell: number }>('SELECT cell FROM vector_cells WHERE generation = ? ORDER BY cell', g2.generation);
      assert.ok(cells2[0]!.cell > cells1[1]!.cell, 'cell ids only grow');
      assert.deepEqual(await run(store, { type: 'retireVectorGenerations' }), { retired: 0 }, 'a vector still lives in generation 1');
      const moved = await run(store, { type: 'moveVectors', moves: [
        { rowid: early!.rowid, cell: cells2[1]!.cell }, { rowid: late!.rowid, cell: cells1[1]!.cell },
      ] });
      assert.deepEqual(moved, { moved: 1, repaired: 0 }, 'a move into a replaced generation is refused');
      await run(store, { type: 'moveVectors', moves: [{ rowid: late!.rowid, cell: cells2[0]!.cell }] });
      const placed = await rows<{ rowid: number; cell: number }>('SELECT rowid, cell FROM memory_vectors ORDER BY rowid');
      assert.deepEqual(placed.map((p) => Number(p.cell)), [cells2[1]!.cell, cells2[0]!.cell]);
      assert.deepEqual(await run(store, { type: 'retireVectorGenerations' }), { retired: 1 });
      assert.equal((await rows('SELECT cell FROM vector_cells')).length, 2);
    }));

    test('reinforce counts each recalled memory once and grows its stability', () => withStore(async ({ store, rows }) => {
      await run(store, { type: 'remember', entity: 'Ola', fact: 'Ola sings', confidence: 1 });
      const [before] = await rows<{ rowid: number; stability: number; last_access_at: number }>('SELECT rowid, stability, last_access_at FROM memories');
      const at = before!.last_access_at + 5 * 86_400_000;
      const done = await run(store, { type: 'reinforce', rowids: [before!.rowid, before!.rowid, 123_456], at });
      assert.equal(done.reinforced, 1);
      const [after] = await rows<{ stability: number; access_count: number; last_access_at: number }>('SELECT stability, access_count, last_access_at FROM memories');
      assert.ok(after!.stability > before!.stability);
      assert.equal(after!.access_count, 1);
      assert.equal(after!.last_access_at, at);
    }));

    test('consolidate promotes still-promotable episodes, skips decay of a memory recalled since, and stores the watermark', () => withStore(async ({ store, rows }) => {
      const { episode_id } = await run(store, { type: 'startEpisode', participants: ['Pat'] });
      await run(store, { type: 'addMessage', episodeId: episode_id, role: 'user', content: 'I run daily' });
      await run(store, { type: 'addMessage', episodeId: episode_id, role: 'user', content: 'I run every day' });
      await run(store, { type: 'remember', entity: 'Pat', fact: 'Pat likes maps', confidence: 1 });
      const all = await rows<{ rowid: number; last_access_at: number; memory_type: string }>('SELECT rowid, last_access_at, memory_type FROM memories ORDER BY rowid');
      const turns = all.filter((r) => r.memory_type === 'episodic').map((r) => r.rowid);
      const fact = all.find((r) => r.memory_type === 'semantic')!;
      const pat = await run(store, { type: 'ensureEntity', name: 'Pat', kind: 'user' });
      const plan = {
        at: fact.last_access_at + 1, watermark: turns[1]!,
        promote: [{ ownerId: pat.id, content: 'Pat runs daily', confidence: 0.9, episodeId: episode_id, members: turns }],
        decay: [
          { rowid: fact.rowid, lastAccessAt: fact.last_access_at - 1, stability: 0.1, difficulty: 5, decayed: true, archive: true },
        ],
      };
      const result = await run(store, { type: 'consolidate', plan });
      assert.deepEqual(result, { promoted: 1, decayed: 0, archived: 0 });
      const promoted = await rows<{ rowid: number }>("SELECT rowid FROM memories WHERE content = 'Pat runs daily'");
      const marks = await rows<{ promoted_into: number }>('SELECT promoted_into FROM memories WHERE episode_id = ? AND memory_type = ? ORDER BY rowid', episode_id, 'episodic');
      assert.deepEqual(marks.map((m) => m.promoted_into), [promoted[0]!.rowid, promoted[0]!.rowid]);
      const [watermark] = await rows<{ value: string }>("SELECT value FROM meta WHERE key LIKE 'promotion_watermark:%'");
      assert.equal(watermark!.value, String(turns[1]));
      const again = await run(store, { type: 'consolidate', plan: { ...plan, decay: [{ ...plan.decay[0]!, lastAccessAt: fact.last_access_at }] } });
      assert.deepEqual(again, { promoted: 0, decayed: 0, archived: 1 }, 'promoted members are never promoted again');
    }));

    test('each namespace\'s document count (BM25\'s N) equals its rows after every kind of write, failed ones counting nothing', () => withStore(async ({ store, rows, cluster, url }) => {
      const other = 'tenant-s';
      /** Each namespace's counted documents beside its rows, as [name, counted, rows]. */
      const counts = async () => (await rows<{ name: string; counted: number; actual: number }>(`SELECT n.name AS name,
          coalesce((SELECT s.documents FROM namespace_text_stats s WHERE s.namespace_id = n.id), 0) AS counted,
          (SELECT count(*) FROM memories m WHERE m.namespace_id = n.id) AS actual
        FROM namespaces n ORDER BY n.name`)).map((r) => [r.name, Number(r.counted), Number(r.actual)]);
      const exact = async (step: string) => {
        const now = await counts();
        assert.deepEqual(now.map(([name, , actual]) => [name, actual, actual]), now, `after ${step}: [namespace, documents, rows]`);
        return now;
      };
      // Remembers in two namespaces in one flush: new rows, a duplicate (no row), supersession.
      const flush = (commands: { namespace: string; command: Parameters<typeof run>[1] }[]) =>
        store.runBatch(commands.map((c, i) => ({ id: i + 1, namespace: c.namespace, command: c.command })));
      const here = store.namespace;
      let outcome = await flush([
        { namespace: here, command: { type: 'remember', entity: 'Ann', fact: 'Ann lives in Rome', confidence: 0.5, validFrom: 1_600_000_000_000 } },
        { namespace: other, command: { type: 'remember', entity: 'Ann', fact: 'Ann likes tea', confidence: 0.5 } },
        { namespace: here, command: { type: 'remember', entity: 'Ann', fact: 'ann LIVES in rome', confidence: 0.9 } },
        { namespace: here, command: { type: 'remember', entity: 'Ann', fact: 'Ann lives in Oslo', confidence: 0.9, validFrom: 1_700_000_000_000 } },
      ]);
      assert.ok(outcome.replies.every((r) => r.ok));
      assert.deepEqual(await exact('remembers'), [[here, 2, 2], [other, 1, 1]]);
      // A failing command mid-flush: the flush is rolled back and run again in savepoints.
      outcome = await flush([
        { namespace: here, command: { type: 'remember', entity: 'Bo', fact: 'Bo rows boats', confidence: 1 } },
        { namespace: other, command: { type: 'remember', entity: 'Bo', fact: 'Bo rows boats', confidence: 1 } },
        { namespace: here, command: { type: 'addMessage', episodeId: randomUUID(), role: 'user', content: 'to nowhere' } },
        { namespace: other, command: { type: 'rememberBatch', facts: [{ entity: 'Cy', fact: 'Cy swims', confidence: 1 }, { entity: 'Cy', fact: 'Cy swims', confidence: 1 }] } },
      ]);
      assert.deepEqual(outcome.replies.map((r) => r.ok), [true, true, false, true]);
      assert.deepEqual(await exact('a flush with a failing command'), [[here, 3, 3], [other, 3, 3]]);
      // Conversations: turns one by one, an extraction, a whole imported one.
      const { episode_id } = await run(store, { type: 'startEpisode', participants: ['Pat'] });
      for (const content of ['I run daily', 'I run every day']) await run(store, { type: 'addMessage', episodeId: episode_id, role: 'user', content });
      const [turn] = await rows<{ id: string }>('SELECT id FROM memories WHERE episode_id = ? ORDER BY seq', episode_id);
      await run(store, { type: 'endEpisode', episodeId: episode_id, outcome: null, sourceIds: [turn!.id],
        memories: [{ content: 'Pat runs', memory_type: 'semantic', confidence: 1, extraction_tier: 1, entities: ['Pat'] }] });
      await run(store, { type: 'importEpisode', participants: ['Pat'], outcome: null, startedAt: 1_650_000_000_000,
        messages: [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }],
        memories: [{ content: 'Pat says hello', memory_type: 'semantic', confidence: 1, extraction_tier: 1, entities: ['Pat'] }] });
      assert.deepEqual(await exact('conversations'), [[here, 9, 9], [other, 3, 3]]);
      // Promotion (a new row) with decay and archiving (rows kept).
      const turns = (await rows<{ rowid: number }>("SELECT rowid FROM memories WHERE episode_id = ? AND memory_type = 'episodic' ORDER BY seq", episode_id)).map((r) => r.rowid);
      const [fact] = await rows<{ rowid: number; last_access_at: number }>("SELECT rowid, last_access_at FROM memories WHERE content = 'Bo rows boats' AND namespace_id = ?", store.namespaceId);
      const pat = await run(store, { type: 'ensureEntity', name: 'Pat', kind: 'user' });
      const consolidated = await run(store, { type: 'consolidate', plan: { at: fact!.last_access_at + 1, watermark: turns[1]!,
        promote: [{ ownerId: pat.id, content: 'Pat runs daily', confidence: 0.9, episodeId: episode_id, members: turns }],
        decay: [{ rowid: fact!.rowid, lastAccessAt: fact!.last_access_at, stability: 0.1, difficulty: 5, decayed: true, archive: true }] } });
      assert.deepEqual(consolidated, { promoted: 1, decayed: 0, archived: 1 });
      assert.deepEqual(await exact('consolidation'), [[here, 10, 10], [other, 3, 3]]);
      // Deletes: the episode's rows (turns, extracted, promoted) in two chunks, the second finding
      // one gone already; one memory retracted.
      const snapshot = header(pat);
      const doomed = await rows<{ rowid: number; id: string }>('SELECT rowid, id FROM memories WHERE episode_id = ? ORDER BY seq', episode_id);
      await run(store, { type: 'forgetBegin', deletionId: 5, entity: 'Pat' });
      await run(store, { type: 'forgetRows', snapshot, rows: [[doomed[0]!.rowid, doomed[0]!.id]] });
      await run(store, { type: 'forgetRows', snapshot, rows: doomed.map((d) => [d.rowid, d.id] as [number, string]) });
      await run(store, { type: 'forgetEnd', deletionId: 5 });
      const [oslo] = await rows<{ rowid: number; id: string }>("SELECT rowid, id FROM memories WHERE content = 'Ann lives in Oslo'");
      await run(store, { type: 'retractMemory', row: [oslo!.rowid, oslo!.id], snapshot: header(await run(store, { type: 'ensureEntity', name: 'Ann', kind: 'user' })) });
      assert.deepEqual(await exact('deletes'), [[here, 5, 5], [other, 3, 3]]);
      // Restores: rows back, then again (present: nothing inserted); one whose second memory's id
      // another namespace holds fails as a whole, its first memory included.
      const restorable = (id: string, content: string) => ({
        id, memory_type: 'semantic', content, content_key: content.toLowerCase(), confidence: 1, stability: 1, difficulty: 5,
        access_count: 0, last_access_at: 1, created_at: 1, archived: 0, extraction_tier: 1, entity_id: pat.id,
        episode_id: null, seq: null, role: null, links: [], embedding: null,
      } as SnapshotFileT['memories'][number]);
      const back = [restorable(randomUUID(), 'Pat swims'), restorable(randomUUID(), 'Pat dives')];
      assert.deepEqual(await run(store, { type: 'restoreRows', snapshot, memories: back }), { processed: 2, restored: 2, present: 0 });
      assert.deepEqual(await run(store, { type: 'restoreRows', snapshot, memories: back }), { processed: 2, restored: 0, present: 2 });
      const [taken] = await rows<{ id: string }>('SELECT m.id FROM memories m JOIN namespaces n ON n.id = m.namespace_id WHERE n.name = ?', other);
      await assert.rejects(run(store, { type: 'restoreRows', snapshot, memories: [restorable(randomUUID(), 'Pat rows'), restorable(taken!.id, 'Pat sails')] }),
        { code: 'SNAPSHOT_CONFLICT' });
      assert.deepEqual(await exact('restores'), [[here, 7, 7], [other, 3, 3]]);
      if (cluster && url) {
        // PostgreSQL: a flush that fails as a whole after its inserts, before COMMIT, counts
        // nothing. Another session holds the statistics row, so the flush waits on it after
        // inserting its rows; that statement is then cancelled (57014), failing the transaction.
        const holder = postgres(url, { max: 1, onnotice: () => {} });
        try {
          const release = holder.begin(async (tx) => {
            await tx`SELECT documents FROM namespace_text_stats WHERE namespace_id = ${store.namespaceId} FOR UPDATE`;
            const lost = run(store, { type: 'remember', entity: 'Ann', fact: 'Ann lives in Lima', confidence: 1 }).then(() => 'stored', (e: { code?: string }) => e.code);
            let settled = false;
            void lost.then(() => { settled = true; });
            let waiting: { pid: number }[] = [];
            // Stops polling if the flush never waits (a regression): the assertion below then fails.
            while (waiting.length === 0 && !settled) {
              await new Promise((resolve) => setTimeout(resolve, 10));
              waiting = await tx`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`;
            }
            if (waiting.length > 0) await tx`SELECT pg_cancel_backend(${waiting[0]!.pid})`;
            assert.equal(await lost, '57014');
          });
          await release;
        } finally {
          await holder.end();
        }
        assert.deepEqual(await exact('a flush failed before COMMIT'), [[here, 7, 7], [other, 3, 3]]);
        await run(store, { type: 'remember', entity: 'Ann', fact: 'Ann lives in Lima', confidence: 1 });
        assert.deepEqual(await exact('the next flush'), [[here, 8, 8], [other, 3, 3]]);
      }
    }));
  });
}
