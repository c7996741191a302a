// A new fact's placement on its attribute's timeline reads only its neighbours: its cost must not
// grow with the attribute's history (an entity with thousands of values made every write re-read
// them all). Checked by counting the rows the row port hands the rule, not by timing.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { SqliteRows } from '../src/writer/sqlite/rows.js';
import { runNow } from '../src/writer/commands/run.js';
import { TIMELINE_PAGE } from '../src/writer/commands/supersession.js';
import type { WriteRows } from '../src/writer/commands/rows.js';
import { tempDir } from './support/service.js';
import { placeFact } from './support/place-fact.js';

const dir = tempDir('memrt-supersession-');
const db = openDatabase(join(dir, 'w.db'), { readonly: false, synchronous: 'NORMAL' });
after(() => db.close());

/** The port, counting every row any of its operations hands back. */
function counted(rows: WriteRows): { rows: WriteRows; read: () => number; reset: () => void } {
  let read = 0;
  const proxy = new Proxy(rows, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return function* (...args: unknown[]) {
        const result = runNow(value.apply(target, args));
        if (Array.isArray(result)) read += result.length;
        return result;
      };
    },
  });
  return { rows: proxy, read: () => read, reset: () => { read = 0; } };
}

test('placing a fact reads a bounded number of rows however many values its attribute had', () => {
  migrate(db);
  const ns = ensureNamespace(db, 'default');
  const sqlite = new SqliteRows(db, ns, () => 0);
  const owner = runNow(sqlite.insertEntity({ id: 'eve', name: 'Eve', kind: 'user' }, 0));
  const remember = (rows: WriteRows, id: string, city: string, at: number) => {
    const content = `Eve lives in ${city}`;
    return placeFact(rows, owner.id, id, content, at, content.toLowerCase());
  };
  const VALUES = 40 * TIMELINE_PAGE;
  for (let i = 0; i < VALUES; i++) remember(sqlite, `f${i}`, `city ${i}`, 10 * (i + 1));

  const probe = counted(sqlite);
  // In the middle of the timeline: closed by the next later value, closing the one before it.
  const middle = remember(probe.rows, 'mid', 'the middle', 10 * (VALUES / 2) + 5);
  assert.deepEqual(middle.next, { at: 10 * (VALUES / 2 + 1), id: `f${VALUES / 2}` });
  assert.deepEqual(middle.supersedes.map((f) => f.id), [`f${VALUES / 2 - 1}`]);
  assert.ok(probe.read() <= 2 * TIMELINE_PAGE, `read ${probe.read()} rows for one fact among ${VALUES} values`);

  probe.reset();
  // After the last: supersedes the current value only.
  const latest = remember(probe.rows, 'last', 'the end', 10 * (VALUES + 1));
  assert.equal(latest.next, null);
  assert.deepEqual(latest.supersedes.map((f) => f.id), [`f${VALUES - 1}`]);
  assert.ok(probe.read() <= 2 * TIMELINE_PAGE, `read ${probe.read()} rows for one fact among ${VALUES} values`);

  probe.reset();
  // Before the first (a backwards import): arrives superseded by the first value.
  const earliest = remember(probe.rows, 'first', 'the start', 1);
  assert.deepEqual(earliest.next, { at: 10, id: 'f0' });
  assert.deepEqual(earliest.supersedes, []);
  assert.ok(probe.read() <= 2 * TIMELINE_PAGE, `read ${probe.read()} rows for one fact among ${VALUES} values`);
});

test('same-value rows are skipped page by page: the next different value is still found', () => {
  const ns = ensureNamespace(db, 'repeats');
  const rows = new SqliteRows(db, ns, () => 0);
  const owner = runNow(rows.insertEntity({ id: 'bob', name: 'Bob', kind: 'user' }, 0));
  const put = (id: string, content: string, at: number) => placeFact(rows, owner.id, id, content, at);
  // More same-value rows than a page, after the new fact's moment, then a different value.
  for (let i = 0; i < 3 * TIMELINE_PAGE; i++) put(`r${i}`, 'Bob lives in Oslo', 100 + i);
  put('rome', 'Bob lives in Rome', 1000);
  const place = put('early', 'Bob lives in Oslo', 50);
  assert.deepEqual(place.next, { at: 1000, id: 'rome' });
  // More valid rows than a page are all closed by a different value.
  const closing = put('late', 'Bob lives in Paris', 500);
  assert.equal(closing.supersedes.length, 3 * TIMELINE_PAGE + 1);
  assert.deepEqual(closing.next, { at: 1000, id: 'rome' });
});
