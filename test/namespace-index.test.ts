// A namespace's own copy of the full-text index (workers/sqlite/namespace-index.ts), in a file
// holding several namespaces: the lexical signal answers exactly — rows and scores — what it
// answers in a file holding that namespace alone, through every write, each taken into the copy
// without making it again (new rows, other namespaces' rows, deletes, a context written or
// cleared), for a small namespace (the shared slot) and for larger ones (the kept slots, evicted
// in turn); and a large copy's pages are given back when a smaller namespace takes its slot.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { Bm25Signal } from '../src/workers/sqlite/lexical.js';
import { LARGE_SLOTS, NamespaceIndexes, SMALL_NAMESPACE_LIMIT } from '../src/workers/sqlite/namespace-index.js';
import type { Proposal, RecallContext } from '../src/workers/port/candidates.js';
import { memoryInserter } from './support/rows.js';
import { tempDir } from './support/service.js';

const WORDS = ['apricot', 'orchard', 'harvest', 'river', 'market', 'canal', 'morning', 'tractor', 'ladder', 'basket'];
const QUERIES: string[][] = [['apricot'], ['apricot', 'orchard', 'harvest'], ['river', 'canal'], ['ladder', 'basket', 'market', 'morning']];
const ctx = (terms: string[], types: RecallContext['filter']['types'] = null): RecallContext =>
  ({ terms, depth: 25, filter: { entityId: null, types } } as RecallContext);

/** A text of `n` words chosen by `seed` (deterministic, lengths varying). */
const text = (seed: number, n: number) => Array.from({ length: n }, (_, i) => WORDS[(seed * 7 + i * (seed % 5 + 1)) % WORDS.length]).join(' ');

describe('a namespace ranked in its own copy of the index', () => {
  let dir: string;
  let writer: Db;
  let reader: Db;
  const ns: Record<string, number> = {};
  const signals: Record<string, Bm25Signal> = {};
  let next = 0;
  let copies = 0;

  const add = (name: string, count: number, words = 6) => {
    const insert = memoryInserter(writer, ns[name]!);
    writer.transaction(() => {
      for (let i = 0; i < count; i++, next++) {
        insert({ id: `${name}-${next}`, content: text(next, words + (next % 9)), type: next % 3 === 0 ? 'episodic' : 'semantic' });
      }
    })();
  };

  /** What the signal answers for the namespace in a copy of the file where it is alone. */
  const alone = (name: string): Proposal[][] => {
    const path = join(dir, `alone-${++copies}.db`);
    writer.prepare('VACUUM INTO ?').run(path);
    const copy = openDatabase(path, { readonly: false });
    try {
      copy.prepare('DELETE FROM memories WHERE namespace_id != ?').run(ns[name]);
      const signal = new Bm25Signal(copy, ns[name]!);
      return [...QUERIES.map((q) => signal.retrieve(ctx(q))), signal.retrieve(ctx(QUERIES[1]!, ['episodic']))];
    } finally {
      copy.close();
    }
  };
  const beside = (name: string): Proposal[][] =>
    [...QUERIES.map((q) => signals[name]!.retrieve(ctx(q))), signals[name]!.retrieve(ctx(QUERIES[1]!, ['episodic']))];
  const same = (name: string, label: string) => {
    const expected = alone(name);
    assert.ok(expected[1]!.length > 0, `${label}: ${name} has matches`);
    assert.deepEqual(beside(name), expected, `${label}: ${name}`);
  };

  before(() => {
    dir = tempDir('memrt-ns-index-');
    writer = openDatabase(join(dir, 'shared.db'), { readonly: false });
    migrate(writer);
    for (const name of ['small', 'other', 'large-1', 'large-2', 'large-3', 'churned']) ns[name] = ensureNamespace(writer, name);
    reader = openDatabase(join(dir, 'shared.db'), { readonly: true });
    for (const name of Object.keys(ns)) signals[name] = new Bm25Signal(reader, ns[name]!);
    add('small', 40);
    // The other namespace: A's words, many and long (it would move every statistic).
    add('other', 300, 20);
  });
  after(() => {
    reader.close();
    writer.close();
  });

  const copiesMade = () => NamespaceIndexes.of(reader).copiesMade;

  test('a small namespace: as alone, through appends, deletes and a cleared context, in the copy first made', () => {
    same('small', 'first');
    const made = copiesMade();
    same('small', 'again (the copy kept)');
    add('small', 5);
    add('other', 50, 30);
    same('small', 'after appends');
    writer.prepare("DELETE FROM memories WHERE rowid = (SELECT min(rowid) FROM memories WHERE namespace_id = ?)").run(ns.small);
    same('small', 'after a delete');
    writer.prepare("UPDATE memories SET context = 'apricot apricot orchard' WHERE rowid = (SELECT max(rowid) FROM memories WHERE namespace_id = ?)").run(ns.small);
    same('small', 'after a context written');
    writer.prepare("UPDATE memories SET context = '' WHERE rowid = (SELECT max(rowid) FROM memories WHERE namespace_id = ?)").run(ns.small);
    same('small', 'after the context cleared');
    assert.equal(copiesMade(), made, 'every change was taken into the copy, none made it again');
    // Another small namespace takes the shared slot in turn, then this one again.
    same('other', 'the other one');
    same('small', 'back');
  });

  test(`larger namespaces keep their copies (${LARGE_SLOTS} at a time), the least recently ranked rebuilt`, () => {
    for (const name of ['large-1', 'large-2', 'large-3']) add(name, SMALL_NAMESPACE_LIMIT + 50, 4);
    for (const name of ['large-1', 'large-2', 'large-3', 'large-1', 'small', 'large-3']) same(name, 'in turn');
    add('large-3', 20);
    add('large-1', 3);
    same('large-3', 'after appends');
    writer.prepare("DELETE FROM memories WHERE rowid = (SELECT max(rowid) FROM memories WHERE namespace_id = ?)").run(ns['large-3']);
    same('large-3', 'after a delete');
    same('large-1', 'after appends (it was evicted meanwhile or kept)');
  });

  test('a large namespace under churn: deletes, edits and appends mixed, as alone, never copied again', () => {
    add('churned', SMALL_NAMESPACE_LIMIT * 2, 5);
    const rowids = (): number[] => writer.prepare<[number], number>('SELECT rowid FROM memories WHERE namespace_id = ? ORDER BY rowid').pluck().all(ns.churned!);
    same('churned', 'first');
    const made = copiesMade();
    for (let round = 0; round < 4; round++) {
      const rows = rowids();
      writer.transaction(() => {
        // A tenth of the rows deleted, spread over the whole namespace (old rows too)…
        for (let i = round; i < rows.length; i += 10) writer.prepare('DELETE FROM memories WHERE rowid = ?').run(rows[i]);
        // …contexts written (longer rows) and cleared again (shorter)…
        for (let i = round + 3; i < rows.length; i += 37) writer.prepare("UPDATE memories SET context = ? WHERE rowid = ?").run(text(i, 3 + round), rows[i]);
        for (let i = round + 5; i < rows.length; i += 53) writer.prepare("UPDATE memories SET context = '' WHERE rowid = ?").run(rows[i]);
      })();
      // …and new rows, here and beside.
      add('churned', 30 + round);
      add('other', 20, 25);
      same('churned', `churn round ${round + 1}`);
    }
    assert.equal(copiesMade(), made, 'the copy took every change in place');
  });

  test("a smaller namespace taking a large copy's slot gives the temporary file's pages back", () => {
    const pages = () => reader.pragma('temp.page_count', { simple: true }) as number;
    add('large-2', 6000, 30);
    // Both large slots: large-2 (now long) and churned; then large-1 (smaller) takes the least recent, large-2's.
    same('large-2', 'the long one');
    same('churned', 'kept');
    const withLong = pages();
    same('large-1', 'a smaller one in its place');
    assert.ok(pages() < withLong * 0.6, `temporary file: ${withLong} pages, then ${pages()}`);
    same('large-2', 'the long one again');
  });
});
