// The values of an attribute valid at a moment (WriteRows.factsValidAt), read either by validity
// through memories_valid_facts (few values start later) or by start through
// memories_by_fact_attribute (many do): both the same rows in the same pages as the plain filter
// over the whole timeline, each with the plan it was chosen for.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { factAttribute } from '../src/shared/fact-attributes.js';
import { SqliteRows } from '../src/writer/sqlite/rows.js';
import { runNow } from '../src/writer/commands/run.js';
import type { TimelineFact } from '../src/writer/commands/rows.js';
import { tempDir } from './support/service.js';
import { placeFact } from './support/place-fact.js';

const dir = tempDir('memrt-valid-at-');
const db = openDatabase(join(dir, 'w.db'), { readonly: false, synchronous: 'NORMAL' });
after(() => db.close());
migrate(db);
const ns = ensureNamespace(db, 'default');
const rows = new SqliteRows(db, ns, () => 0);
const owner = runNow(rows.insertEntity({ id: 'ann', name: 'Ann', kind: 'user' }, 0));

/** The read as a filter over every row of the attribute: what the indexed read must equal. */
const reference = db.prepare<[string, string, number, number, number, number], TimelineFact>(`SELECT rowid, id, content, occurred_at, valid_until
  FROM memories NOT INDEXED WHERE entity_id = ? AND fact_attribute = ? AND occurred_at < ? AND (valid_until IS NULL OR valid_until > ?)
    AND memory_type = 'semantic' AND archived = 0
  ORDER BY rowid LIMIT ? OFFSET ?`);

function remember(id: string, content: string, at: number): void {
  placeFact(rows, owner.id, id, content, at);
}

test('facts valid at a moment: the same rows and pages as the filter over the whole timeline', () => {
  // Out of time order (an import), with repeated values (kept side by side, both valid), two
  // values at one moment, future-dated facts and an archived one: superseded, current and
  // not-yet-valid rows all present.
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  const moments: number[] = [];
  for (let i = 0; i < 120; i++) {
    const at = 1000 + (next() % 400) * 10;
    moments.push(at);
    remember(`v${i}`, `Ann lives in city ${next() % 6}`, at);
  }
  remember('same-moment-a', 'Ann lives in Lima', 2505);
  remember('same-moment-b', 'Ann lives in Quito', 2505);
  for (let i = 0; i < 5; i++) remember(`future${i}`, `Ann lives in future town ${i}`, 10_000 + i * 100);
  // An archived current value beside the current one (the same value: both stay current).
  remember('current-archived', 'Ann lives in future town 4', 10_450);
  db.prepare("UPDATE memories SET archived = 1 WHERE id IN ('v3', 'current-archived')").run();
  const attribute = factAttribute('Ann lives in Lima')!.attribute;
  const counts = db.prepare<[], { current: number; superseded: number }>(`SELECT count(*) FILTER (WHERE valid_until IS NULL) AS current,
    count(*) FILTER (WHERE valid_until IS NOT NULL) AS superseded FROM memories WHERE fact_attribute IS NOT NULL`).get()!;
  assert.ok(counts.superseded > 100 && counts.current >= 1, JSON.stringify(counts));

  const probes = new Set<number>([0, 2505, 20_000]);
  // Every stored moment and validity end, and either side of it: each bound of each seek.
  const bounds = db.prepare<[], number>('SELECT occurred_at FROM memories UNION SELECT valid_until FROM memories WHERE valid_until IS NOT NULL').pluck().all();
  for (const at of [...moments, ...bounds]) for (const d of [-1, 0, 1]) probes.add(at + d);
  let nonEmpty = 0;
  for (const at of probes) {
    for (const limit of [1, 3, 16]) {
      for (let offset = 0; ; offset += limit) {
        const expected = reference.all(owner.id, attribute, at, at, limit, offset);
        for (const manyLater of [false, true]) {
          const actual = runNow(rows.factsValidAt(owner.id, attribute, at, offset, limit, manyLater));
          assert.deepEqual(actual, expected, `at ${at}, limit ${limit}, offset ${offset}, manyLater ${manyLater}`);
        }
        if (expected.length > 0) nonEmpty++;
        if (expected.length < limit) break;
      }
    }
  }
  // Some moments must see several valid values (repeats, the same-moment pair) for the pages to be tested.
  const pair = runNow(rows.factsValidAt(owner.id, attribute, 2506, 0, 16, false)).map((f) => f.id);
  assert.ok(pair.includes('same-moment-a') && pair.includes('same-moment-b'), pair.join());
  assert.ok(nonEmpty > probes.size, `${nonEmpty} non-empty pages`);
});

test('with few values starting later, facts valid at a moment are sought by validity, not by walking every earlier value', () => {
  const plan = planOf('factsValidAtByValidity', ['ann', 'residence', 1, 'ann', 'residence', 1, 1, 0]);
  const searches = plan.filter((d) => d.startsWith('SEARCH memories'));
  assert.equal(searches.length, 2, plan.join('\n'));
  assert.match(searches[0]!, /USING INDEX memories_valid_facts \(entity_id=\? AND fact_attribute=\? AND valid_until=\? AND occurred_at<\?\)/);
  assert.match(searches[1]!, /USING INDEX memories_valid_facts \(entity_id=\? AND fact_attribute=\? AND valid_until>\?\)/);
  assert.ok(!plan.some((d) => d.includes('memories_by_fact_attribute') || d.startsWith('SCAN')), plan.join('\n'));
});

test('with many values starting later (a fact placed early on a long timeline), they are sought by start, not by walking every later value', () => {
  const plan = planOf('factsValidAtByStart', ['ann', 'residence', 1, 1, 0]);
  const searches = plan.filter((d) => d.startsWith('SEARCH memories'));
  assert.equal(searches.length, 1, plan.join('\n'));
  assert.match(searches[0]!, /USING INDEX memories_by_fact_attribute \(entity_id=\? AND fact_attribute=\? AND occurred_at<\?\)/);
});

test('placement picks the read by how many values start later', () => {
  // A fresh owner's attribute: facts imported newest first (each placed before all the others),
  // then one in time order. Spy on the port to see which read each placement asked for.
  const bob = runNow(rows.insertEntity({ id: 'bob', name: 'Bob', kind: 'user' }, 0));
  const asked: boolean[] = [];
  const spying = Object.create(rows) as SqliteRows;
  spying.factsValidAt = function* (...args: Parameters<SqliteRows['factsValidAt']>) {
    asked.push(args[5]);
    return yield* rows.factsValidAt(...args);
  };
  for (let i = 40; i > 0; i--) placeFact(spying, bob.id, `bob${i}`, `Bob lives in town ${i}`, 1000 + i);
  placeFact(spying, bob.id, 'bob-last', 'Bob lives in the last town', 5000);
  // The first 16 placements (fewer than a page later) by validity, the rest of the import by start, the last by validity.
  assert.deepEqual(asked, [...Array(16).fill(false), ...Array(24).fill(true), false]);
  const current = db.prepare<[], string>("SELECT id FROM memories WHERE entity_id = 'bob' AND valid_until IS NULL").pluck().all();
  assert.deepEqual(current, ['bob-last']);
});

/** The plan of one of the statements factsValidAt runs, taken from the prepared statement the adapter holds. */
function planOf(statement: 'factsValidAtByValidity' | 'factsValidAtByStart', params: unknown[]): string[] {
  const held = (rows as unknown as { s: Record<typeof statement, (limit: number) => { source: string }> }).s;
  return db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${held[statement](16).source}`).all(...params).map((r) => r.detail);
}
