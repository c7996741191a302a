// The vector signal's filters on a real SQLite file: when every neighbour KNN fetched was
// filtered out (archived), it looks again wider rather than coming back empty; an entity
// with a few memories is scanned exactly, one owning thousands goes through KNN. Where the last
// look had to widen, the next starts wide: one KNN instead of two, the same rows either way.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { blobOf } from '../src/shared/meta.js';
import { INSERT_VECTOR_SQL } from '../src/shared/sql-schema.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { prepareVectorTable } from '../src/writer/sqlite/vector-table.js';
import { VectorSignal } from '../src/workers/sqlite/vectors.js';
import { LARGE_ENTITY, type RecallContext } from '../src/workers/port/candidates.js';
import { VectorCells } from '../src/workers/sqlite/ivf-cells.js';
import { memoryInserter, unit } from './support/rows.js';
import { tempDir } from './support/service.js';

const QUERY = unit([1, 0, 0, 0]);
/** More memories than LARGE_ENTITY, all owned by one entity; their similarity to QUERY falls with i. */
const MEMORIES = LARGE_ENTITY + 200;
const ARCHIVED = 60;

describe('vector signal filters', () => {
  let db: Db;
  let ns: number;
  let signal: VectorSignal;
  const rowidAt: number[] = [];

  before(() => {
    db = openDatabase(join(tempDir('memrt-vec-'), 'v.db'), { readonly: false, synchronous: 'NORMAL' });
    migrate(db);
    prepareVectorTable(db, { id: 'hash-4', dimensions: 4 }, false);
    ns = ensureNamespace(db, 'default');
    db.prepare("INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES ('e-all', ?, 'All', 'user', 0), ('e-few', ?, 'Few', 'user', 0)").run(ns, ns);
    const memory = memoryInserter(db, ns);
    const vector = db.prepare(INSERT_VECTOR_SQL);
    const link = db.prepare("INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, 'owner')");
    db.transaction(() => {
      for (let i = 0; i < MEMORIES; i++) {
        // The nearest ARCHIVED memories are archived: KNN at k = depth finds only those.
        const rowid = memory({ id: `m${i}`, content: `memory ${i}`, embedded: 1, archived: i < ARCHIVED ? 1 : 0 });
        vector.run(BigInt(rowid), BigInt(ns), 0n, blobOf(unit([1, i / MEMORIES, 0, 0])));
        link.run(rowid, 'e-all');
        if (i % 1000 === 999) link.run(rowid, 'e-few');
        rowidAt.push(rowid);
      }
    })();
    signal = new VectorSignal(db, ns, 0.2, new VectorCells(db, ns));
  });
  after(() => db.close());

  const retrieve = (entityId: string | null) => signal.retrieve({
    query: 'q', terms: [], queryVector: QUERY, queryEntityIds: [], filter: { entityId, types: null }, depth: 50, now: Date.now(),
  } satisfies RecallContext).map((p) => p.rowid);

  test('every fetched neighbour archived: the next 50 active ones, not nothing', () => {
    assert.deepEqual(retrieve(null), rowidAt.slice(ARCHIVED, ARCHIVED + 50));
  });

  test('an entity owning thousands goes through KNN with the filter and still gets its nearest', () => {
    assert.deepEqual(retrieve('e-all'), rowidAt.slice(ARCHIVED, ARCHIVED + 50));
  });

  test('after a look that had to widen, the next starts wide: one KNN, the same rows as a fresh signal', () => {
    // Counts the namespace-wide KNN runs of a signal built on a counting connection.
    let knnRuns = 0;
    const counting = new Proxy(db, {
      get(target, key) {
        if (key !== 'prepare') return Reflect.get(target, key);
        return (sql: string) => {
          const statement = target.prepare(sql);
          if (!sql.includes('per_cell')) return statement;
          return new Proxy(statement, { get: (s, k) => (k === 'all' ? (...a: unknown[]) => { knnRuns++; return (s.all as (...x: unknown[]) => unknown)(...a); } : Reflect.get(s, k)) });
        };
      },
    });
    const warm = new VectorSignal(counting, ns, 0.2, new VectorCells(db, ns));
    const fresh = () => new VectorSignal(db, ns, 0.2, new VectorCells(db, ns));
    const look = (s: VectorSignal, vector: Float32Array) => s.retrieve({
      query: 'q', terms: [], queryVector: vector, queryEntityIds: [], filter: { entityId: null, types: null }, depth: 50, now: Date.now(),
    } satisfies RecallContext).map((p) => p.rowid);
    const nearArchived = QUERY;
    const farFromArchived = unit([1, 1, 0, 0]);
    assert.deepEqual(look(warm, nearArchived), rowidAt.slice(ARCHIVED, ARCHIVED + 50));
    assert.equal(knnRuns, 2, 'the first look widens');
    assert.deepEqual(look(warm, nearArchived), rowidAt.slice(ARCHIVED, ARCHIVED + 50));
    assert.equal(knnRuns, 3, 'the next starts wide: one KNN');
    // Started wide where the narrow look would have sufficed: the same rows a fresh signal finds.
    assert.deepEqual(look(warm, farFromArchived), look(fresh(), farFromArchived));
    assert.equal(knnRuns, 4);
    assert.deepEqual(look(warm, farFromArchived), look(fresh(), farFromArchived));
    assert.equal(knnRuns, 5, 'back to the narrow look once it sufficed');
  });

  test('an entity with a few memories is scanned exactly', () => {
    assert.deepEqual(retrieve('e-few'), [999, 1999, 2999, 3999].map((i) => rowidAt[i]));
  });
});
