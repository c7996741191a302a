// The read port's contract (issue 16), run against both adapters over the same rows: the SQLite
// file a real service wrote (writer thread, embedding backfill, IVF indexer), and a private
// PostgreSQL 15 cluster holding a row-for-row copy of it. Ranks and shapes are asserted, and
// where both backends must agree exactly (counts, pages, transcripts, vector neighbours), that.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { connectReader, type Sql } from '../src/workers/postgres/client.js';
import { PostgresReadPort } from '../src/workers/postgres/read-port.js';
import type { ReadPort } from '../src/workers/port/read-port.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { queryTerms } from '../src/workers/recall/query-text.js';
import { MATCH_BUDGET } from '../src/workers/port/term-selection.js';
import type { RecallContext } from '../src/workers/port/candidates.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { cellCountFor } from '../src/workers/ivf/kmeans.js';
import { DAY_MS } from '../src/shared/fsrs.js';
import { postgresUnavailable, startPrimary, type PgCluster } from './support/postgres.js';
import { applyPostgresSchema, mirrorIntoPostgres, mirrorSnapshotIntoPostgres } from './support/pg-mirror.js';
import { SnapshotFileError } from '../src/shared/snapshot-files.js';
import { del, post, startTestService, type TestService } from './support/service.js';

const DIMENSIONS = 64;
const MIN_SIMILARITY = 0.2;
const hasher = new HashingEmbedder(DIMENSIONS);
const topics = ['sailing', 'violin', 'chess', 'pottery', 'climbing', 'baking', 'astronomy', 'gardening', 'fencing', 'origami'];
/** Enough vectors past SERVICE_VECTOR_INDEX_MIN (100) that the IVF index is trained and used. */
const GENERIC_FACTS = 160;
/**
 * Later facts sharing the word "practises" with the generic ones: past the match budget, so a
 * query's common term must be left out for an older rare term's memory to be ranked at all.
 */
const CROWD_FACTS = MATCH_BUDGET;
/** Ava's facts for text search parity: folded accents both ways, a stop-word-only query. */
const TEXT_FACTS = ['Ava orders a café crème at the corner bakery', 'Ava reads about the Musee Rodin gardens', 'Ava saw The Who play live in 1969'];

let t: TestService;
let sqliteDb: Db;
let episodeId: string;

/** The SQLite file, written through the service as any client would. */
const written = (async () => {
  await new Promise((resolve) => setImmediate(resolve));
  t = await startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: String(DIMENSIONS), SERVICE_VECTOR_INDEX_MIN: '100' });
  const remember = (entity: string, fact: string) => post(t.base, '/v1/remember', { entity, fact });
  for (let i = 0; i < GENERIC_FACTS; i += 20) {
    await Promise.all(Array.from({ length: 20 }, (_, k) => i + k).map((n) =>
      remember(`person${n % 23}`, `person${n % 23} practises ${topics[n % topics.length]} with friend${n} on day ${(n * 7) % 31}`)));
  }
  await remember('ava', 'Ava sails from the harbour at Cascais every Sunday');
  await remember('ava', 'Ava practises kintsugi to mend broken bowls');
  await remember('zoltan', 'Zoltan keeps bees on the roof of the observatory');
  episodeId = (await post(t.base, '/v1/episodes/start', { participants: ['ava', 'guide-bot'] })).body.episode_id;
  for (const [role, content] of [['user', 'Where should I go for my holidays?'], ['assistant', 'Lisbon, finally! The trams are lovely.'], ['user', 'I will book the ferry then']]) {
    await post(t.base, `/v1/episodes/${episodeId}/message`, { role, content });
  }
  for (const fact of TEXT_FACTS) await remember('ava', fact);
  for (let i = 0; i < CROWD_FACTS; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, k) => i + k).map((n) => remember(`person${n % 23}`, `person${n % 23} practises scales, round ${n}`)));
  }
  await remember('leaving-soon', 'leaving-soon keeps a canoe in the shed');
  await remember('leaving-soon', 'leaving-soon fixed the canoe with epoxy');
  await t.service.backfill.idle();
  assert.equal((await del(t.base, '/v1/entities/leaving-soon')).status, 200);
  await t.service.vectorIndexer.flush();
  sqliteDb = openDatabase(join(t.dir, 'memory.db'), { readonly: true });
  return sqliteDb;
})();

after(async () => {
  sqliteDb?.close();
  await t?.close();
});

const namespaceOf = (db: Db) => db.prepare("SELECT id FROM namespaces WHERE name = 'default'").pluck().get() as number;
const rowidOf = (db: Db, content: string) => db.prepare('SELECT rowid FROM memories WHERE content = ?').pluck().get(content) as number;

function context(query: string, queryVector: Float32Array | null, filter: RecallContext['filter'] = { entityId: null, types: null }): RecallContext {
  return { query, terms: queryTerms(query), queryVector, queryEntityIds: [], filter, depth: 50, now: Date.now() };
}

/** The contract: every adapter must pass these over the rows written above. */
function contract(name: string, open: () => Promise<ReadPort>, options: { skip?: string | false } = {}) {
  describe(`read port: ${name}`, { skip: options.skip ?? false }, () => {
    let port: ReadPort;
    let engine: RecallEngine;
    before(async () => {
      port = await open();
      engine = new RecallEngine(port);
    });

    test('lexical candidates come best first with a positive raw score; the rare word wins', async () => {
      const lexical = await port.snapshot((reads) => reads.lexical(context('which harbour does Ava sail from', null)));
      assert.ok(lexical.length > 0);
      for (let i = 1; i < lexical.length; i++) assert.ok(lexical[i - 1].score >= lexical[i].score, 'not best first');
      assert.ok(lexical.every((p) => p.score > 0 && Number.isInteger(p.rowid)));
      const [top] = await engine.recall({ query: 'which harbour does Ava sail from', entity: null, types: null, limit: 3, queryVector: null });
      assert.match(top.row.content, /harbour/);
    });

    test('a term every fact shares is left out when a rare one is there', async () => {
      // "practises" matches more rows than one query ranks, and the kintsugi fact is older than
      // the newest MATCH_BUDGET of them: only leaving the common term out finds it.
      const practising = sqliteDb.prepare(`SELECT count(*) FROM memories_fts WHERE memories_fts MATCH '"practises"'`).pluck().get() as number;
      assert.ok(practising > MATCH_BUDGET, `${practising} rows`);
      const kintsugi = rowidOf(sqliteDb, 'Ava practises kintsugi to mend broken bowls');
      const lexical = await port.snapshot((reads) => reads.lexical(context('practises kintsugi', null)));
      assert.equal(lexical[0]?.rowid, kintsugi);
      // The common term's rows still fill the list after it.
      assert.equal(lexical.length, 50);
      const hits = await engine.recall({ query: 'practises kintsugi', entity: null, types: null, limit: 5, queryVector: null });
      assert.match(hits[0].row.content, /kintsugi/);
    });

    test('accents fold both ways, as FTS5 folds them', async () => {
      for (const [query, fact] of [['cafe creme', TEXT_FACTS[0]], ['CAFÉ', TEXT_FACTS[0]], ['musée', TEXT_FACTS[1]]]) {
        const lexical = await port.snapshot((reads) => reads.lexical(context(query, null)));
        assert.equal(lexical[0]?.rowid, rowidOf(sqliteDb, fact), query);
      }
    });

    test('a query of stop words only still finds its memory', async () => {
      assert.deepEqual(queryTerms('The Who'), ['the', 'who']);
      const lexical = await port.snapshot((reads) => reads.lexical(context('The Who', null)));
      assert.equal(lexical[0]?.rowid, rowidOf(sqliteDb, TEXT_FACTS[2]));
      const [top] = await engine.recall({ query: 'The Who', entity: null, types: null, limit: 3, queryVector: null });
      assert.equal(top?.row.content, TEXT_FACTS[2]);
    });

    test('the IVF index is trained, and every probed memory is its own nearest neighbour', async () => {
      const status = await port.vectorIndexStatus();
      assert.ok(status.cells > 1 && status.generations === 1 && status.stale === 0, JSON.stringify(status));
      assert.equal(status.vectors, GENERIC_FACTS + 3 + TEXT_FACTS.length + CROWD_FACTS + 3);
      const rows = sqliteDb.prepare('SELECT rowid, content FROM memories WHERE embedded = 1 ORDER BY rowid LIMIT 30').all() as { rowid: number; content: string }[];
      const vectors = await hasher.embed(rows.map((r) => r.content));
      for (const [i, row] of rows.entries()) {
        const nearest = await port.snapshot((reads) => reads.nearest(context(row.content, vectors[i])));
        assert.equal(nearest[0]?.rowid, row.rowid, `memory ${row.rowid}`);
        assert.ok(Math.abs(nearest[0].score - 1) < 1e-4 && !nearest[0].weak);
      }
    });

    test('filters: an entity and types narrow every candidate read', async () => {
      const ava = (await port.entity('ava'))!;
      assert.equal(ava.name, 'ava');
      const [vector] = await hasher.embed(['practises sailing']);
      const hits = await engine.recall({ query: 'practises sailing', entity: 'ava', types: null, limit: 10, queryVector: vector });
      assert.ok(hits.length >= 2);
      const avaRows = new Set(sqliteDb.prepare(`SELECT memory_rowid FROM memory_entities WHERE entity_id = ? AND relation IN ('owner', 'participant')`).pluck().all(ava.id) as number[]);
      assert.ok(hits.every((h) => avaRows.has(h.row.rowid)));
      const episodic = await engine.recall({ query: 'holidays Lisbon ferry', entity: null, types: ['episodic'], limit: 10, queryVector: null });
      assert.ok(episodic.length >= 2 && episodic.every((h) => h.row.memory_type === 'episodic' && h.row.episode_id === episodeId));
      assert.deepEqual(await engine.recall({ query: 'Ava', entity: 'nobody-here', types: null, limit: 5, queryVector: null }), []);
    });

    test('conversation and entity links: adjacent turns, members of a small entity, linked rows', async () => {
      const turns = sqliteDb.prepare('SELECT rowid FROM memories WHERE episode_id = ? ORDER BY seq').pluck().all(episodeId) as number[];
      const zoltan = (await port.entity('zoltan'))!;
      const bees = rowidOf(sqliteDb, 'Zoltan keeps bees on the roof of the observatory');
      await port.snapshot(async (reads) => {
        assert.deepEqual((await reads.adjacent([turns[1]], { entityId: null, types: null })).sort((a, b) => a - b), [turns[0], turns[2]]);
        // Within reach 2 of the first turn: the reply and the same speaker's next turn after it.
        assert.deepEqual(await reads.adjacent([turns[0]], { entityId: null, types: null }), [turns[1]]);
        assert.deepEqual((await reads.adjacent([turns[0]], { entityId: null, types: null }, 2)).sort((a, b) => a - b), [turns[1], turns[2]]);
        assert.deepEqual(await reads.membersOfFew([zoltan.id], 50, { entityId: null, types: null }), [bees]);
        assert.deepEqual([...await reads.linked([bees, turns[0]], [zoltan.id])], [bees]);
        // Who said it: the turns link ava as a participant only; the bees fact is Zoltan's own.
        const ava = (await reads.entity('ava'))!;
        assert.equal((await reads.linked(turns, [ava.id])).size, turns.length);
        assert.deepEqual([...await reads.about(turns, [ava.id])], []);
        assert.deepEqual([...await reads.about([bees, turns[0]], [zoltan.id, ava.id])], [bees]);
        assert.deepEqual(await reads.entitiesNamedIn('what does Zoltan keep?'), [zoltan.id]);
        const [position] = await reads.positions([turns[1]]);
        assert.deepEqual({ ...position }, { rowid: turns[1], memory_type: 'episodic', episode_id: episodeId, seq: 1, confidence: position.confidence, created_at: position.created_at });
        const [row] = await reads.rows([bees]);
        assert.equal(row.content, 'Zoltan keeps bees on the roof of the observatory');
        // Stored vectors (dense feedback): the memory's own, so its cosine to itself is 1; unknown rowids are absent.
        const stored = await reads.vectors([bees, -1]);
        assert.deepEqual([...stored.keys()], [bees]);
        const [self] = (await reads.similarities(stored.get(bees)!, [bees])).values();
        assert.ok(Math.abs(self - 1) < 1e-4, String(self));
        assert.equal(row.memory_type, 'semantic');
      });
    });

    test('the handlers\' reads: stats, entity pages, episodes, backlog, an entity\'s memories', async () => {
      const stats = await port.stats();
      // DELETE removes the entity with its memories (forget means forget): leaving-soon no longer counts.
      assert.deepEqual(stats, { namespace: 'default', entities: 23 + 3, episodic_memories: 3, semantic_memories: GENERIC_FACTS + 3 + TEXT_FACTS.length + CROWD_FACTS, procedural_memories: 0 });
      const page = await port.entities({ q: 'PERSON1', limit: 3, offset: 0 });
      assert.equal(page.total, 11); // person1, person10 … person19
      assert.deepEqual(page.entities.map((e) => e.name), ['person1', 'person10', 'person11']);
      assert.ok(page.entities.every((e) => e.kind && typeof e.memory_count === 'number' && !Number.isNaN(Date.parse(e.created_at))));
      const episode = (await port.episode(episodeId))!;
      assert.equal(episode.id, episodeId);
      assert.equal(episode.ended_at, null);
      assert.deepEqual((await port.participants(episodeId)).map((p) => p.name), ['ava', 'guide-bot']);
      const transcript = await port.recentTranscript(episodeId, 1_000);
      assert.deepEqual(transcript.turns.map((turn) => turn.role), ['user', 'assistant', 'user']);
      assert.deepEqual(transcript.earlierRoles, []);
      // 'I will book the ferry then' (26) and 'Lisbon, finally! The trams are lovely.' (38) fit 64 characters.
      const recent = await port.recentTranscript(episodeId, 64);
      assert.deepEqual(recent.turns.map((turn) => turn.content), ['Lisbon, finally! The trams are lovely.', 'I will book the ferry then']);
      assert.deepEqual(recent.earlierRoles, ['user']);
      // The newest turn is read whatever its length.
      assert.deepEqual((await port.recentTranscript(episodeId, 1)).turns.map((turn) => turn.role), ['user']);
      assert.deepEqual(await port.recentTranscript('no-such-episode', 1_000), { turns: [], earlierRoles: [] });
      assert.deepEqual([...(await port.episodeStarts([episodeId, 'missing'])).keys()], [episodeId]);
      assert.equal(await port.unembeddedCount(), 0);
      assert.deepEqual(await port.unembedded(10), []);
      const ava = (await port.entity('ava'))!;
      const memories = [...await port.entityMemories(ava.id, 10, 1_000_000)];
      assert.ok(memories.length >= 2);
      for (let i = 1; i < memories.length; i++) assert.ok(memories[i - 1].created_at >= memories[i].created_at, 'not newest first');
      // A budget smaller than one row still yields the first (the caller always keeps it).
      assert.deepEqual([...await port.entityMemories(ava.id, 10, 1)].slice(0, 1).map((m) => m.id), [memories[0].id]);
    });

    test('deletion snapshots: listed oldest first with their counts, read back whole; an unknown one is missing', async () => {
      const [summary, ...others] = await port.listSnapshots();
      assert.equal(others.length, 0);
      assert.deepEqual({ ...summary, snapshot_id: 'x', captured_at: 'x' }, {
        snapshot_id: 'x', captured_at: 'x', namespace: 'default', entity: 'leaving-soon', memory_count: 2,
        counts: { episodic: 0, semantic: 2, procedural: 0 }, vectors: 2, problem: null,
      });
      const snapshot = await port.readSnapshot(summary.snapshot_id);
      assert.equal(snapshot.entity.name, 'leaving-soon');
      assert.deepEqual(snapshot.memories.map((m) => m.content).sort(), ['leaving-soon fixed the canoe with epoxy', 'leaving-soon keeps a canoe in the shed']);
      assert.ok(snapshot.memories.every((m) => m.embedding?.length === DIMENSIONS && m.links.length > 0));
      await assert.rejects(port.readSnapshot('00000000-0000-4000-8000-000000000000'), (error) => error instanceof SnapshotFileError && error.kind === 'missing');
    });

    test('consolidation reads: the watermark, the newest episodic row, promotion and decay candidates', async () => {
      const turns = sqliteDb.prepare('SELECT rowid FROM memories WHERE episode_id = ? ORDER BY seq').pluck().all(episodeId) as number[];
      const ava = (await port.entity('ava'))!;
      assert.equal(await port.promotionWatermark(), 0, 'no run yet');
      assert.equal(await port.newestEpisodicRowid(), turns[2]);
      // The user's two turns, about ava (the first user participant); the assistant's turn is not a candidate.
      const candidates = await port.promotionCandidates(0, 10);
      assert.deepEqual(candidates.map((c) => [c.rowid, c.subject_id, c.episode_id, c.content]), [
        [turns[0], ava.id, episodeId, 'Where should I go for my holidays?'], [turns[2], ava.id, episodeId, 'I will book the ferry then']]);
      assert.ok(candidates.every((c) => c.content_key.length > 0 && c.vector?.length === DIMENSIONS));
      assert.deepEqual(await port.promotionCandidates(turns[2], 10), [], 'no subject has a candidate past the watermark');
      assert.equal((await port.promotionCandidates(turns[2] - 1, 10)).length, 2, 'a subject with a fresh one brings all its candidates');
      assert.deepEqual((await port.promotionCandidates(0, 1)).map((c) => c.rowid), [turns[2]], 'only the newest of each subject past the cap');
      const now = Date.now();
      assert.deepEqual(await port.decayCandidates(now, 171), [], 'nothing is unrecalled past its stability yet');
      // Every stored fact and turn is active; the deleted entity's rows are gone.
      const active = GENERIC_FACTS + 3 + 3 + TEXT_FACTS.length + CROWD_FACTS;
      const later = await port.decayCandidates(now + 3650 * DAY_MS, 171);
      assert.equal(later.length, active);
      assert.ok(later.every((row) => row.stability > 0 && row.difficulty > 0 && row.last_access_at <= now && row.decayed_at === null));
    });

    test('a snapshot is checked whole (its header) and read back in chunks, in rowid order; an unknown one is missing', async () => {
      const [{ snapshot_id: id }] = await port.listSnapshots();
      const { memories, summary: _summary, ...header } = await port.readSnapshot(id) as Awaited<ReturnType<ReadPort['readSnapshot']>> & { summary?: unknown };
      assert.deepEqual(await port.checkSnapshot(id), header);
      const read = [];
      for (let after: number | null = 0; after !== null;) {
        const chunk = await port.snapshotMemories(id, after);
        read.push(...chunk.memories);
        after = chunk.next;
      }
      assert.deepEqual(read, memories);
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const attempt of [port.checkSnapshot(unknown), port.snapshotMemories(unknown, 0)]) {
        await assert.rejects(attempt, (error) => error instanceof SnapshotFileError && error.kind === 'missing');
      }
    });

    test('a delete\'s snapshot lists the owner and participant rows up to maxRowid, counted by type; an unknown entity is NOT_FOUND', async () => {
      const db = await written;
      const ava = (await port.entity('ava'))!;
      const expected = db.prepare(`SELECT DISTINCT m.rowid, m.id FROM memories m JOIN memory_entities me ON me.memory_rowid = m.rowid
        WHERE me.entity_id = ? AND me.relation IN ('owner', 'participant') ORDER BY m.rowid`).raw().all(ava.id) as [number, string][];
      assert.equal(expected.length, 5 + TEXT_FACTS.length); // her facts, 3 turns of the episode ava took part in
      const kintsugi = rowidOf(db, 'Ava practises kintsugi to mend broken bowls');
      const taken: string[] = [];
      try {
        const upTo = await port.snapshotEntity('ava', kintsugi);
        assert.deepEqual(upTo.rows, expected.filter(([rowid]) => rowid <= kintsugi));
        const all = await port.snapshotEntity('ava', Number.MAX_SAFE_INTEGER);
        taken.push(upTo.snapshot!.snapshot_id, all.snapshot!.snapshot_id);
        assert.deepEqual(all.rows, expected);
        assert.deepEqual({ ...all.snapshot, snapshot_id: 'id', captured_at: 'at', owner_only: true }, {
          snapshot_id: 'id', captured_at: 'at', format_version: 1, owner_only: true, memory_count: 5 + TEXT_FACTS.length, episodic_count: 3, semantic_count: 2 + TEXT_FACTS.length,
        });
        // PostgreSQL names the snapshot the writer fills in the delete's transaction; SQLite has written its file.
        if (all.header) {
          // The header also keeps what a restore needs to recreate the entity record: created_at and participations.
          const { created_at: createdAt, episodes, ...entity } = all.header.entity;
          assert.deepEqual({ ...entity, id: all.header.snapshot_id }, { ...ava, id: all.snapshot!.snapshot_id });
          assert.equal(typeof createdAt, 'number');
          assert.ok(Array.isArray(episodes) && episodes.length === 1, JSON.stringify(episodes));
        }
        else assert.ok(existsSync(join(t.service.config.snapshotDir, `${all.snapshot!.snapshot_id}.json`)));
        assert.deepEqual(await port.snapshotEntity('ava', 0), { rows: [], snapshot: null });
        await assert.rejects(port.snapshotEntity('nobody-at-all', Number.MAX_SAFE_INTEGER), (error) => (error as { code?: string }).code === 'NOT_FOUND');
      } finally {
        // The listings compared below hold the service's snapshot only.
        for (const id of taken) rmSync(join(t.service.config.snapshotDir, `${id}.json`), { force: true });
      }
    });

    test('vector index upkeep: a new vector gets a current cell, training gives √N/2 cells, nothing is stale', async () => {
      const status = await port.vectorIndexStatus();
      const [vector] = await hasher.embed(['someone practises chess']);
      assert.ok((await port.cellFor(vector)) > 0);
      const trained = await port.trainVectorIndex();
      assert.equal(trained.trainedOn, status.vectors);
      assert.equal(trained.centroids.count, cellCountFor(status.vectors));
      assert.deepEqual(await port.staleVectorMoves(10), []);
    });
  });
}

contract('SQLite', async () => {
  const db = await written;
  return new SqliteReadPort(db, namespaceOf(db), 'default', { minSimilarity: MIN_SIMILARITY, config: t.service.config });
});

const unavailable = postgresUnavailable();
let primary: PgCluster | undefined;
let sql: Sql | undefined;
let sqlitePort: ReadPort;
let postgresPort: PostgresReadPort;

contract('PostgreSQL', async () => {
  const db = await written;
  primary = await startPrimary();
  sql = connectReader(primary.url);
  await applyPostgresSchema(sql, DIMENSIONS);
  await mirrorIntoPostgres(db, sql);
  sqlitePort = new SqliteReadPort(db, namespaceOf(db), 'default', { minSimilarity: MIN_SIMILARITY, config: t.service.config });
  for (const { snapshot_id } of await sqlitePort.listSnapshots()) {
    await mirrorSnapshotIntoPostgres(await sqlitePort.readSnapshot(snapshot_id), sql, namespaceOf(db));
  }
  postgresPort = new PostgresReadPort(sql, namespaceOf(db), 'default', { minSimilarity: MIN_SIMILARITY });
  return postgresPort;
}, { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false });

describe('PostgreSQL answers as SQLite does over the same rows', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  after(async () => {
    await sql?.end();
    await primary?.stop();
  });

  test('the same vector neighbours, in the same order, through the same IVF cells', async () => {
    const rows = sqliteDb.prepare('SELECT content FROM memories ORDER BY rowid DESC LIMIT 20').pluck().all() as string[];
    const vectors = await hasher.embed(rows.map((content) => `${content} tomorrow`));
    for (const vector of vectors) {
      const nearest = (port: ReadPort) => port.snapshot((reads) => reads.nearest(context('', vector)));
      const [got, expected] = [await nearest(postgresPort), await nearest(sqlitePort)];
      assert.equal(got.length, expected.length);
      // The same rows in the same order; only near-equal scores (float32 distances in vec0,
      // float64 dot products in the pool, among thousands of templated texts) may swap places.
      expected.forEach((want, i) => {
        assert.ok(Math.abs(got[i].score - want.score) < 1e-5, `score ${i}: ${got[i].score} vs ${want.score}`);
        // A row may also trade places with one just past the list's end, when their scores tie at the cut.
        const tiedWith = expected.find((p) => p.rowid === got[i].rowid)?.score ?? expected[expected.length - 1].score;
        if (got[i].rowid !== want.rowid) assert.ok(Math.abs(got[i].score - tiedWith) < 1e-5, `row ${i}`);
      });
    }
  });

  test('a cell too big for the cell cache is still scored (the cache only saves reading it again)', async () => {
    const uncached = new PostgresReadPort(sql!, namespaceOf(sqliteDb), 'default', { minSimilarity: MIN_SIMILARITY, vectorCacheBytes: 1 });
    const rows = sqliteDb.prepare('SELECT content FROM memories ORDER BY rowid LIMIT 10').pluck().all() as string[];
    for (const vector of await hasher.embed(rows)) {
      const ids = async (port: ReadPort) => (await port.snapshot((reads) => reads.nearest(context('', vector)))).map((p) => p.rowid);
      const expected = await ids(sqlitePort);
      assert.ok(expected.length > 0);
      assert.deepEqual(await ids(uncached), expected);
    }
  });

  test('a cell whose members change but keep their count and rowid sum is read again', async () => {
    const ns = namespaceOf(sqliteDb);
    const [query, far] = await hasher.embed(['Ava restores clocks in a tower', 'zebra quartet umbrella']);
    const cell = await postgresPort.cellFor(query);
    const blob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    const [{ base }] = await sql!<{ base: number }[]>`SELECT max(rowid) + 100 AS base FROM memories`;
    const add = async (rowid: number, vector: Float32Array) => {
      await sql!`INSERT INTO memories (rowid, id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty,
          last_access_at, created_at, extraction_tier, embedded, vector_cell, occurred_at) OVERRIDING SYSTEM VALUE
        VALUES (${rowid}, ${`fp-${rowid}`}, ${ns}, 'semantic', 'fingerprint row', 'k', 0.8, 1, 5, 0, ${Date.now()}, 0, 1, ${cell}, ${Date.now()})`;
      await sql!`INSERT INTO memory_vectors (rowid, namespace_id, cell, embedding) VALUES (${rowid}, ${ns}, ${cell}, ${blob(vector)})`;
    };
    const nearestTo = async () => (await postgresPort.snapshot((reads) => reads.nearest(context('', query))))[0]?.rowid;
    await add(base + 1, far);
    await add(base + 4, far);
    await nearestTo(); // the cell is cached with rowids +1 and +4
    // A move in and a delete: same count, same sum of rowids (1 + 4 = 2 + 3).
    await sql!`DELETE FROM memories WHERE rowid IN (${base + 1}, ${base + 4})`;
    await add(base + 2, query);
    await add(base + 3, far);
    assert.equal(await nearestTo(), base + 2);
    await sql!`DELETE FROM memories WHERE rowid IN (${base + 2}, ${base + 3})`;
  });

  test('the same best hit for distinctive questions, and the same counts and pages', async () => {
    for (const query of ['which harbour does Ava sail from', 'who keeps bees', 'mend broken bowls', 'trams in Lisbon']) {
      const [vector] = await hasher.embed([query]);
      const best = async (port: ReadPort) => (await new RecallEngine(port).recall({ query, entity: null, types: null, limit: 1, queryVector: vector }))[0]?.row.id;
      assert.equal(await best(postgresPort), await best(sqlitePort), query);
    }
    assert.deepEqual(await postgresPort.stats(), await sqlitePort.stats());
    assert.deepEqual(await postgresPort.entities({ limit: 100, offset: 0 }), await sqlitePort.entities({ limit: 100, offset: 0 }));
    for (const query of [{ limit: 100, offset: 0 }, { entity: 'ava', limit: 1, offset: 0 }, { entity: 'nobody', limit: 5, offset: 0 }]) {
      const episodes = await sqlitePort.episodes(query);
      assert.deepEqual(await postgresPort.episodes(query), episodes, JSON.stringify(query));
      if (query.entity === 'ava') assert.deepEqual(episodes.episodes.map((e) => e.participants), [['ava', 'guide-bot']]);
    }
    const [snapshot] = await sqlitePort.listSnapshots();
    assert.deepEqual(await postgresPort.listSnapshots(), [snapshot]);
    assert.deepEqual(await postgresPort.readSnapshot(snapshot.snapshot_id), await sqlitePort.readSnapshot(snapshot.snapshot_id));
    assert.deepEqual(await postgresPort.checkSnapshot(snapshot.snapshot_id), await sqlitePort.checkSnapshot(snapshot.snapshot_id));
  });

  test('the same consolidation candidates, vectors included, and the same decay candidates around their stabilities', async () => {
    for (const watermark of [0, await sqlitePort.newestEpisodicRowid() - 1]) {
      assert.deepEqual(await postgresPort.promotionCandidates(watermark, 2_000), await sqlitePort.promotionCandidates(watermark, 2_000));
    }
    assert.equal(await postgresPort.newestEpisodicRowid(), await sqlitePort.newestEpisodicRowid());
    assert.equal(await postgresPort.promotionWatermark(), await sqlitePort.promotionWatermark());
    // Times at which a decay step is due for half the rows (strictly older last access) and not
    // for the other half, then the same with the archive rule alone (factor < 1).
    const rows = sqliteDb.prepare('SELECT last_access_at, stability FROM memories WHERE archived = 0 ORDER BY last_access_at').all() as { last_access_at: number; stability: number }[];
    const middle = rows[rows.length >> 1];
    const byRowid = (list: { rowid: number }[]) => [...list].sort((a, b) => a.rowid - b.rowid);
    for (const [at, factor] of [[middle.last_access_at + middle.stability * DAY_MS, 171], [middle.last_access_at + middle.stability * 0.5 * DAY_MS, 0.5]]) {
      const expected = byRowid(await sqlitePort.decayCandidates(at, factor));
      assert.ok(expected.length > 0 && expected.length < rows.length, `some rows are due at ${at}, not all`);
      assert.deepEqual(byRowid(await postgresPort.decayCandidates(at, factor)), expected, `at ${at}, factor ${factor}`);
    }
  });

  test('a vector written after a recall is found by the next one (the cell cache sees the change)', async () => {
    const [vector] = await hasher.embed(['Ava tunes the harpsichord before dawn']);
    const nearestTo = async () => (await postgresPort.snapshot((reads) => reads.nearest(context('', vector))))[0]?.rowid;
    const before = await nearestTo();
    const cell = await postgresPort.cellFor(vector);
    const [{ rowid }] = await sql!<{ rowid: number }[]>`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence,
        stability, difficulty, last_access_at, created_at, extraction_tier, embedded, vector_cell, occurred_at)
      VALUES ('late-one', ${namespaceOf(sqliteDb)}, 'semantic', 'Ava tunes the harpsichord before dawn', 'k', 0.8, 1, 5, 0, ${Date.now()}, 0, 1, ${cell}, ${Date.now()})
      RETURNING rowid`;
    await sql!`INSERT INTO memory_vectors (rowid, namespace_id, cell, embedding)
      VALUES (${rowid}, ${namespaceOf(sqliteDb)}, ${cell}, ${Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength)})`;
    assert.notEqual(before, rowid);
    assert.equal(await nearestTo(), rowid);
  });
});
