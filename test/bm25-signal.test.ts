// BM25 at scale, on a real SQLite file: a term too common to rank cheaply is left out when a
// rarer one carries the query (and fills up after it), a query of common terms alone ranks the
// newest matches, an entity's memories are always ranked in full, however old, and a file with
// several namespaces ranks a namespace as it ranks it alone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { Bm25Signal } from '../src/workers/sqlite/lexical.js';
import { queryTerms } from '../src/workers/recall/query-text.js';
import type { RecallContext } from '../src/workers/port/candidates.js';
import type { MemoryType } from '../src/shared/schemas.js';
import { memoryInserter } from './support/rows.js';
import { tempDir } from './support/service.js';

/** More than the signal's match budget (4,000). */
const COMMON_ROWS = 4_500;

describe('bm25 signal at scale', () => {
  let db: Db;
  let ns: number;
  let signal: Bm25Signal;
  let oldestEntityMemory: number;
  const rare: number[] = [];

  before(() => {
    db = openDatabase(join(tempDir('memrt-bm25-'), 'b.db'), { readonly: false, synchronous: 'NORMAL' });
    migrate(db);
    ns = ensureNamespace(db, 'default');
    db.prepare("INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES ('e-ola', ?, 'Ola', 'user', 0)").run(ns);
    const insert = memoryInserter(db, ns);
    const add = (content: string, type: MemoryType = 'semantic', owner: string | null = null) =>
      insert({ id: `m-${content}`, content, type, entityId: owner });
    db.transaction(() => {
      // The oldest row: Ola's, matching only the common term.
      oldestEntityMemory = add('Ola said the lives of bees are short', 'semantic', 'e-ola');
      db.prepare("INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, 'e-ola', 'owner')").run(oldestEntityMemory);
      // The oldest 400 are short, so bm25 would rank them first if it saw them.
      db.prepare("INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES ('e-big', ?, 'Big', 'user', 0)").run(ns);
      const own = db.prepare("INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, 'e-big', 'owner')");
      for (let i = 0; i < COMMON_ROWS; i++) {
        own.run(add(i < 400 ? `live ${i}` : `note ${i}: where people live ${i % 7 === 0 ? 'quietly' : ''}`, i % 2 ? 'semantic' : 'procedural', 'e-big'));
      }
      for (let i = 0; i < 3; i++) rare.push(add(`zyxwv number ${i} lives by the sea`));
      rare.push(add('zyxwv without the common word'));
    })();
    signal = new Bm25Signal(db, ns);
  });
  after(() => db.close());

  const ctx = (query: string, filter: RecallContext['filter'] = { entityId: null, types: null }): RecallContext => ({
    query, terms: queryTerms(query), queryVector: null, queryEntityIds: [], filter, depth: 50, now: Date.now(),
  });
  const rowids = (query: string, filter?: RecallContext['filter']) => signal.retrieve(ctx(query, filter)).map((p) => p.rowid);
  const newestWindow = () => Math.max(...rare) - 4_000;

  test('a rare term carries the query: the common one is left out of the match, then fills up', () => {
    const found = rowids('zyxwv live');
    assert.equal(found.length, 50);
    assert.deepEqual(new Set(found.slice(0, rare.length)), new Set(rare));
    assert.ok(found.slice(rare.length).every((rowid) => rowid >= newestWindow()), 'fillers come from the newest matches');
  });

  test('a term matching nothing does not crowd out the others', () => {
    assert.equal(rowids('qqqqqq live').length, 50);
    assert.deepEqual(new Set(rowids('qqqqqq zyxwv')), new Set(rare));
  });

  test('within the budget: exactly what plain FTS5 ranks, equal scores oldest first', () => {
    const plain = db.prepare(`SELECT rowid FROM memories_fts WHERE memories_fts MATCH '"zyxwv" OR "quietly"' ORDER BY rank LIMIT 50`).pluck().all();
    assert.deepEqual(rowids('zyxwv quietly'), plain);
  });

  test('rare terms within the budget all count together', () => {
    const found = rowids('zyxwv quietly');
    // 4 rows of the rare term and ~640 of the other fit in 4,000: both terms rank.
    assert.equal(found.length, 50);
    // The rarer term weighs more: its rows come first.
    assert.deepEqual(new Set(found.slice(0, rare.length)), new Set(rare));
  });

  test('a term matching more rows than the budget ranks only the newest matches', () => {
    const found = rowids('live');
    assert.equal(found.length, 50);
    assert.ok(found.every((rowid) => rowid >= newestWindow()), 'a row older than the newest 4,000 matches was ranked');
    const typed = rowids('live', { entityId: null, types: ['procedural'] });
    assert.equal(typed.length, 50);
    assert.ok(typed.every((rowid) => rowid >= newestWindow()));
  });

  test("with an entity, all of its matches are ranked, however old", () => {
    assert.deepEqual(rowids('live', { entityId: 'e-ola', types: null }), [oldestEntityMemory]);
  });

  test('an entity owning more than 4,000 memories is a filter on the windowed path, not a walk over its links', () => {
    const found = rowids('live', { entityId: 'e-big', types: null });
    assert.equal(found.length, 50);
    assert.ok(found.every((rowid) => rowid >= newestWindow()), 'the walk over every link ranked old rows');
    const owned = new Set(db.prepare("SELECT memory_rowid FROM memory_entities WHERE entity_id = 'e-big'").pluck().all() as number[]);
    assert.ok(found.every((rowid) => owned.has(rowid)), 'a memory of another entity came back');
  });

  test('with several namespaces in the file, the namespace is ranked as alone: window, scores and all', () => {
    const other = ensureNamespace(db, 'another');
    const alone = rowids('live');
    const aloneScored = signal.retrieve(ctx('live'));
    // A namespace without memories shares nothing: still the single-namespace path.
    assert.deepEqual(rowids('live'), alone);
    memoryInserter(db, other)({ id: 'other-1', content: 'the lives we live' });
    // Now its own copy of the index ranks (namespace-index.ts): the same rows, the same scores.
    assert.deepEqual(signal.retrieve(ctx('live')), aloneScored);
    assert.ok(alone.every((rowid) => rowid >= newestWindow()));
  });
});
