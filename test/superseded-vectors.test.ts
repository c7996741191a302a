// Superseded facts' vectors out of the default KNN (docs/superseded-vectors.md), on a real SQLite
// file through the writer's own commands: a fact superseded in the past moves to its cell's
// retired twin (whether its vector came before or after the supersession), so a recall of what
// is valid now never has vec0 return it, while include_superseded and as_of still find it; a
// fact superseded only from a future moment stays live; retracting the superseding fact puts the
// one it replaced back where every recall looks. Then the retire sweep (the vector index upkeep)
// on a file written before retired cells and for facts whose validity ends later, and the offline
// writers of vectors (namespace import, reembed) placing by the same rule.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { INSERT_VECTOR_SQL, retiredCell, UNASSIGNED_CELL } from '../src/shared/sql-schema.js';
import { loadConfig } from '../src/shared/config.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { prepareVectorTable } from '../src/writer/sqlite/vector-table.js';
import { SqliteWriteStore } from '../src/writer/sqlite/adapter.js';
import { embedderIdentity } from '../src/shared/embedder-identity.js';
import { post, startTestService, tempDir } from './support/service.js';
import { runCli } from './support/cli.js';
import type { TimeFilter } from '../src/shared/event-time.js';
import { VectorSignal } from '../src/workers/sqlite/vectors.js';
import { VectorCells } from '../src/workers/sqlite/ivf-cells.js';
import type { RecallContext } from '../src/workers/port/candidates.js';
import { run, sqliteBackend, type OpenStore } from './support/store-backends.js';

const DIMS = 512; // the default embedder's (use-lite-512): the writer checks vectors against it
const YEAR = 365 * 24 * 3600 * 1000;

/** A unit vector at `angle` radians from the query (dimension 0) towards dimension 1. */
function towards(angle: number): Float32Array {
  const v = new Float32Array(DIMS);
  v[0] = Math.cos(angle);
  v[1] = Math.sin(angle);
  return v;
}
const QUERY = towards(0);

describe('superseded vectors and the KNN (SQLite)', () => {
  const backend = sqliteBackend();
  let opened: OpenStore;
  let reader: Db;
  let namespaceId: number;
  /** Rows each KNN statement returned, per look (counted through a wrapped connection). */
  let knnRows: number[][] = [];
  let signal: VectorSignal;
  const rowidOf = new Map<string, number>();

  async function remember(entity: string, fact: string, validFrom: number): Promise<{ id: string; rowid: number }> {
    const stored = await run(opened.store, { type: 'remember', entity, fact, confidence: 0.9, validFrom });
    const [row] = await opened.rows<{ rowid: number }>('SELECT rowid FROM memories WHERE id = ?', stored.id);
    rowidOf.set(fact, row!.rowid);
    return { id: stored.id, rowid: row!.rowid };
  }

  async function attach(fact: string, vector: Float32Array): Promise<void> {
    await run(opened.store, { type: 'attachVectors', items: [{ rowid: rowidOf.get(fact)!, vector, cell: UNASSIGNED_CELL, mentionedEntityIds: [] }] });
  }

  async function cellOf(fact: string): Promise<number> {
    const [row] = await opened.rows<{ cell: number }>('SELECT cell FROM memory_vectors WHERE rowid = ?', rowidOf.get(fact)!);
    return Number(row!.cell);
  }

  function retrieve(time?: TimeFilter): { hits: number[]; knn: number[] } {
    knnRows = [];
    const hits = signal.retrieve({
      query: 'where does Eli live', terms: [], queryVector: QUERY, queryEntityIds: [], depth: 10, now: Date.now(),
      filter: { entityId: null, types: null, ...(time ? { time } : {}) },
    } satisfies RecallContext).map((p) => p.rowid);
    return { hits: hits.sort((a, b) => a - b), knn: knnRows.flat() };
  }

  const rowids = (...facts: string[]) => facts.map((f) => rowidOf.get(f)!).sort((a, b) => a - b);

  before(async () => {
    opened = await backend.open();
    // Rome, then Madrid, then Paris, each superseding the one before, all in the past. Madrid
    // arrives between the two (valid from 2022): superseded on arrival by Paris, superseding
    // Rome; its vector is attached after that, Rome's and Paris's before.
    await remember('Eli', 'Eli lives in Rome', Date.UTC(2020, 0, 1));
    await attach('Eli lives in Rome', towards(0.1));
    await remember('Eli', 'Eli lives in Paris', Date.UTC(2024, 0, 1));
    await attach('Eli lives in Paris', towards(0.3));
    await remember('Eli', 'Eli lives in Madrid', Date.UTC(2022, 0, 1));
    await attach('Eli lives in Madrid', towards(0.2));
    // Oslo is replaced only from a year ahead: still valid now.
    await remember('Finn', 'Finn lives in Oslo', Date.UTC(2020, 0, 1));
    await attach('Finn lives in Oslo', towards(0.4));
    await remember('Finn', 'Finn lives in Bergen', Date.now() + YEAR);
    await attach('Finn lives in Bergen', towards(0.5));

    reader = openDatabase(opened.config.dbPath, { readonly: true, synchronous: 'FULL' });
    namespaceId = reader.prepare<[], number>("SELECT id FROM namespaces WHERE name = 'default'").pluck().get()!;
    // The KNN statement's rows, as vec0 and the join hand them to the filter.
    const counting = new Proxy(reader, {
      get(target, key) {
        if (key !== 'prepare') return Reflect.get(target, key);
        return (sql: string) => {
          const statement = target.prepare(sql);
          if (!sql.includes('per_cell')) return statement;
          return new Proxy(statement, {
            get: (s, k) => (k === 'all'
              ? (...a: unknown[]) => {
                const rows = (s.all as (...x: unknown[]) => { rowid: number }[])(...a);
                knnRows.push(rows.map((r) => r.rowid));
                return rows;
              }
              : Reflect.get(s, k)),
          });
        };
      },
    });
    signal = new VectorSignal(counting, namespaceId, 0.2, new VectorCells(reader, namespaceId));
  });
  after(async () => {
    reader?.close();
    await opened?.close();
  });

  test('a fact superseded in the past is in its cell\'s retired twin; current ones and one replaced only in the future are live', async () => {
    const [rome] = await opened.rows<{ superseded_by: string | null }>('SELECT superseded_by FROM memories WHERE rowid = ?', rowidOf.get('Eli lives in Rome')!);
    assert.notEqual(rome!.superseded_by, null);
    assert.equal(await cellOf('Eli lives in Rome'), retiredCell(UNASSIGNED_CELL));
    assert.equal(await cellOf('Eli lives in Madrid'), retiredCell(UNASSIGNED_CELL), 'superseded on arrival, vector attached later');
    assert.equal(await cellOf('Eli lives in Paris'), UNASSIGNED_CELL);
    assert.equal(await cellOf('Finn lives in Oslo'), UNASSIGNED_CELL, 'valid until a moment still to come');
    assert.equal(await cellOf('Finn lives in Bergen'), UNASSIGNED_CELL);
    // memories.vector_cell keeps the true IVF cell: the index upkeep reads it.
    const cells = await opened.rows<{ vector_cell: number }>('SELECT DISTINCT vector_cell FROM memories WHERE embedded = 1');
    assert.deepEqual(cells.map((c) => Number(c.vector_cell)), [UNASSIGNED_CELL]);
  });

  test('a default recall\'s KNN never returns the superseded facts; include_superseded and as_of find them', () => {
    const now = retrieve();
    assert.deepEqual(now.hits, rowids('Eli lives in Paris', 'Finn lives in Oslo', 'Finn lives in Bergen'));
    assert.ok(now.knn.length > 0);
    for (const superseded of rowids('Eli lives in Rome', 'Eli lives in Madrid')) assert.ok(!now.knn.includes(superseded), `KNN returned superseded row ${superseded}`);

    const all = retrieve({ validAt: Date.now(), asOf: false, allVersions: true, since: null, until: null });
    assert.deepEqual(all.hits, rowids('Eli lives in Rome', 'Eli lives in Madrid', 'Eli lives in Paris', 'Finn lives in Oslo', 'Finn lives in Bergen'));

    // As of mid-2021 Eli lived in Rome (Madrid from 2022); Finn's Bergen had not occurred.
    const then = retrieve({ validAt: Date.UTC(2021, 5, 1), asOf: true, allVersions: false, since: null, until: null });
    assert.deepEqual(then.hits, rowids('Eli lives in Rome', 'Finn lives in Oslo'));
  });

  test('a query that speaks of a past time probes the retired cells: a fact valid then is found by its vector', () => {
    const in2021 = retrieve({ validAt: Date.now(), asOf: false, allVersions: false, since: null, until: null, during: { from: Date.UTC(2021, 0, 1), to: Date.UTC(2021, 11, 31) } });
    const rome = rowidOf.get('Eli lives in Rome')!;
    assert.ok(in2021.knn.includes(rome), 'the KNN read the retired twin');
    assert.ok(in2021.hits.includes(rome), 'Rome was valid in 2021');
  });

  test('retracting the current value brings the previous one back into the default KNN', async () => {
    const paris = rowidOf.get('Eli lives in Paris')!;
    const [{ id }] = await opened.rows<{ id: string }>('SELECT id FROM memories WHERE rowid = ?', paris) as [{ id: string }];
    await run(opened.store, { type: 'retractMemory', row: [paris, id] });
    assert.equal(await cellOf('Eli lives in Madrid'), UNASSIGNED_CELL, 'valid now again');
    assert.equal(await cellOf('Eli lives in Rome'), retiredCell(UNASSIGNED_CELL), 'still superseded, by Madrid');
    const now = retrieve();
    assert.deepEqual(now.hits, rowids('Eli lives in Madrid', 'Finn lives in Oslo', 'Finn lives in Bergen'));
    assert.ok(!now.knn.includes(rowidOf.get('Eli lives in Rome')!));
  });

  test('the IVF upkeep moving vectors into a new cell keeps a superseded one retired', async () => {
    const generation = await run(opened.store, { type: 'installVectorGeneration', trainedOn: 4, centroids: { count: 1, dimensions: DIMS, data: QUERY } });
    const [{ cell }] = await opened.rows<{ cell: number }>('SELECT cell FROM vector_cells WHERE generation = ?', generation.generation) as [{ cell: number }];
    const moves = ['Eli lives in Rome', 'Eli lives in Madrid'].map((fact) => ({ rowid: rowidOf.get(fact)!, cell }));
    assert.deepEqual(await run(opened.store, { type: 'moveVectors', moves }), { moved: 2, repaired: 0 });
    assert.equal(await cellOf('Eli lives in Rome'), retiredCell(cell));
    assert.equal(await cellOf('Eli lives in Madrid'), cell);
    const [rome] = await opened.rows<{ vector_cell: number }>('SELECT vector_cell FROM memories WHERE rowid = ?', rowidOf.get('Eli lives in Rome')!);
    assert.equal(Number(rome!.vector_cell), cell, 'memories keeps the true cell');
    const now = retrieve();
    assert.ok(now.hits.includes(rowidOf.get('Eli lives in Madrid')!));
    assert.ok(!now.knn.includes(rowidOf.get('Eli lives in Rome')!));
    assert.ok(retrieve({ validAt: Date.now(), asOf: false, allVersions: true, since: null, until: null }).hits.includes(rowidOf.get('Eli lives in Rome')!));
  });
});

/** The vec0 cell of each memory of this content, read on a file of its own. */
function cellsOf(path: string): Map<string, number> {
  const db = openDatabase(path, { readonly: true });
  try {
    const rows = db.prepare<[], { content: string; rowid: number }>('SELECT content, rowid FROM memories').all();
    const cell = db.prepare<[bigint], number | bigint>('SELECT cell FROM memory_vectors WHERE rowid = ?').pluck();
    return new Map(rows.map((r) => [r.content, Number(cell.get(BigInt(r.rowid)) ?? NaN)]));
  } finally {
    db.close();
  }
}

/** As a file written before retired cells holds it: the vector of `content` back in its IVF cell. */
function unretire(path: string, content: string): void {
  const db = openDatabase(path, { readonly: false });
  try {
    const { rowid, vector_cell: cell, namespace_id: ns } = db.prepare<[string], { rowid: number; vector_cell: number; namespace_id: number }>(
      'SELECT rowid, vector_cell, namespace_id FROM memories WHERE content = ?').get(content)!;
    const embedding = db.prepare<[bigint], Buffer>('SELECT embedding FROM memory_vectors WHERE rowid = ?').pluck().get(BigInt(rowid))!;
    db.prepare('DELETE FROM memory_vectors WHERE rowid = ?').run(BigInt(rowid));
    db.prepare(INSERT_VECTOR_SQL).run(BigInt(rowid), BigInt(ns), BigInt(cell), embedding);
  } finally {
    db.close();
  }
}

describe('the retire sweep and the offline writers of vectors (SQLite)', () => {
  const HASH = { SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '8' };
  const dir = tempDir();
  const path = join(dir, 'memory.db');
  const PAST = ['Eli lives in Rome', 'Eli lives in Madrid'];

  before(async () => {
    const t = await startTestService({ SERVICE_PATH: path, ...HASH });
    try {
      await post(t.base, '/v1/remember', { entity: 'Eli', fact: 'Eli lives in Rome', valid_from: '2020-01-01T00:00:00Z' });
      await post(t.base, '/v1/remember', { entity: 'Eli', fact: 'Eli lives in Madrid', valid_from: '2022-01-01T00:00:00Z' });
      await post(t.base, '/v1/remember', { entity: 'Eli', fact: 'Eli lives in Paris', valid_from: '2024-01-01T00:00:00Z' });
      await t.service.backfill.idle();
    } finally {
      await t.close();
    }
  });

  test('a service started on a file written before retired cells retires its superseded vectors; recall still finds them for history', async () => {
    for (const fact of PAST) assert.equal(cellsOf(path).get(fact), retiredCell(UNASSIGNED_CELL), `${fact}: placed by the writer`);
    for (const fact of PAST) unretire(path, fact);
    assert.equal(cellsOf(path).get('Eli lives in Rome'), UNASSIGNED_CELL, 'as an older build left it');

    const t = await startTestService({ SERVICE_PATH: path, ...HASH });
    try {
      await t.service.vectorIndexer.flush();
      assert.equal(t.service.vectorIndexer.retiredVectors, 2);
      const cells = cellsOf(path);
      for (const fact of PAST) assert.equal(cells.get(fact), retiredCell(UNASSIGNED_CELL), fact);
      assert.equal(cells.get('Eli lives in Paris'), UNASSIGNED_CELL);
      const now = await post(t.base, '/v1/recall', { query: 'where does Eli live', limit: 10 });
      assert.deepEqual(now.body.memories.map((m: { content: string }) => m.content), ['Eli lives in Paris']);
      const all = await post(t.base, '/v1/recall', { query: 'where does Eli live', limit: 10, include_superseded: true });
      assert.deepEqual(all.body.memories.map((m: { content: string }) => m.content).sort(), ['Eli lives in Madrid', 'Eli lives in Paris', 'Eli lives in Rome']);
      // Swept once: a later run of the upkeep looks only past where it stopped.
      await t.service.vectorIndexer.flush();
      assert.equal(t.service.vectorIndexer.retiredVectors, 2);
    } finally {
      await t.close();
    }
  });

  test('a deletion snapshot restored online puts a superseded fact\'s vector back retired', async () => {
    const file = join(tempDir(), 'memory.db');
    const t = await startTestService({ SERVICE_PATH: file, ...HASH });
    try {
      await post(t.base, '/v1/remember', { entity: 'Ivo', fact: 'Ivo lives in Lima', valid_from: '2020-01-01T00:00:00Z' });
      await post(t.base, '/v1/remember', { entity: 'Ivo', fact: 'Ivo lives in Quito', valid_from: '2023-01-01T00:00:00Z' });
      await t.service.backfill.idle();
      const deleted = await fetch(`${t.base}/v1/entities/Ivo`, { method: 'DELETE' });
      const snapshotId = ((await deleted.json()) as { snapshot: { snapshot_id: string } }).snapshot.snapshot_id;
      assert.equal(cellsOf(file).size, 0);
      const restored = await post(t.base, `/v1/snapshots/${snapshotId}/restore`);
      assert.equal(restored.body.restored_count, 2);
      const cells = cellsOf(file);
      assert.equal(cells.get('Ivo lives in Lima'), retiredCell(UNASSIGNED_CELL));
      assert.equal(cells.get('Ivo lives in Quito'), UNASSIGNED_CELL);
    } finally {
      await t.close();
    }
  });

  test('namespace import places each vector by the rule: the superseded ones arrive retired', async () => {
    const exported = join(dir, 'ns.jsonl');
    const copy = join(dir, 'copy', 'memory.db');
    assert.equal((await runCli(['export', '--db', path, '--output', exported])).code, 0);
    const r = await runCli(['import', exported, '--db', copy]);
    assert.equal(r.code, 0, r.stderr);
    const cells = cellsOf(copy);
    for (const fact of PAST) assert.equal(cells.get(fact), retiredCell(UNASSIGNED_CELL), fact);
    assert.equal(cells.get('Eli lives in Paris'), UNASSIGNED_CELL);
  });

  test('reembed --all writes every vector again through the writer: the superseded ones stay retired', async () => {
    const r = await runCli(['reembed', '--all', '--quiet', '--db', path], { env: HASH });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /reembedded 3 memories/);
    const cells = cellsOf(path);
    for (const fact of PAST) assert.equal(cells.get(fact), retiredCell(UNASSIGNED_CELL), fact);
    assert.equal(cells.get('Eli lives in Paris'), UNASSIGNED_CELL);
  });

  test('the sweep goes a batch at a time, and retires a fact once the moment it stopped being valid has passed (writer clock)', async () => {
    const file = join(tempDir(), 'memory.db');
    const config = loadConfig({ SERVICE_PATH: file });
    const db = openDatabase(file, { readonly: false });
    migrate(db);
    prepareVectorTable(db, embedderIdentity(config), false);
    const HOUR = 3600 * 1000;
    let clock = Date.UTC(2030, 0, 1);
    const store = new SqliteWriteStore(db, config, ensureNamespace(db, config.namespace), () => clock);
    try {
      const remember = async (fact: string, validFrom: number) => {
        const { id } = await run(store, { type: 'remember', entity: 'Finn', fact, confidence: 0.9, validFrom });
        const rowid = db.prepare<[string], number>('SELECT rowid FROM memories WHERE id = ?').pluck().get(id)!;
        await run(store, { type: 'attachVectors', items: [{ rowid, vector: towards(rowid / 10), cell: UNASSIGNED_CELL, mentionedEntityIds: [] }] });
      };
      const cell = (fact: string) => cellsOf(file).get(fact);
      const sweep = (after: { validUntil: number; rowid: number } | null) => run(store, { type: 'retireSupersededVectors', after, limit: 1 });
      await remember('Finn lives in Oslo', Date.UTC(2020, 0, 1));
      await remember('Finn lives in Bergen', Date.UTC(2021, 0, 1));
      await remember('Finn lives in Tromsø', Date.UTC(2022, 0, 1));
      // Replaced an hour from now: valid now, so live.
      await remember('Finn lives in Stavanger', clock + HOUR);
      assert.equal(cell('Finn lives in Tromsø'), UNASSIGNED_CELL);
      for (const fact of ['Finn lives in Oslo', 'Finn lives in Bergen']) {
        assert.equal(cell(fact), retiredCell(UNASSIGNED_CELL));
        unretire(file, fact);
      }

      // Two facts due, one a command: the cursor carries the sweep on.
      let step = await sweep(null);
      assert.deepEqual([step.moved, step.done], [1, false]);
      step = await sweep(step.next);
      assert.deepEqual([step.moved, step.done], [1, false]);
      step = await sweep(step.next);
      assert.deepEqual([step.moved, step.done], [0, true]);
      assert.deepEqual(step.next, { validUntil: clock, rowid: Number.MAX_SAFE_INTEGER });
      for (const fact of ['Finn lives in Oslo', 'Finn lives in Bergen']) assert.equal(cell(fact), retiredCell(UNASSIGNED_CELL), fact);
      assert.equal(cell('Finn lives in Tromsø'), UNASSIGNED_CELL, 'valid for another hour');

      // Nothing ended since: the next sweep finds nothing. Two hours on, Tromsø's validity has ended.
      assert.deepEqual(await sweep(step.next), { moved: 0, done: true, next: step.next });
      clock += 2 * HOUR;
      const later = await sweep(step.next);
      assert.equal(later.moved, 1);
      assert.equal(cell('Finn lives in Tromsø'), retiredCell(UNASSIGNED_CELL));
      assert.equal(cell('Finn lives in Stavanger'), UNASSIGNED_CELL);
    } finally {
      store.close();
    }
  });
});
