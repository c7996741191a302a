// Superseded facts' vectors out of the default KNN (docs/superseded-vectors.md), on a real SQLite
// file through the writer's own commands: a fact superseded in the past moves to its cell's
// retired twin (whether its vector came before or after the supersession), so a recall of what
// is valid now never has vec0 return it, while include_superseded and as_of still find it; a
// fact superseded only from a future moment stays live; retracting the superseding fact puts the
// one it replaced back where every recall looks.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase, type Db } from '../src/shared/db.js';
import { retiredCell, UNASSIGNED_CELL } from '../src/shared/sql-schema.js';
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
