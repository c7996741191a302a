// The values of an attribute valid at a moment (WriteRows.factsValidAt), read by validity through
// memories_valid_facts: the same rows in the same pages as the plain filter over the whole
// timeline, and a plan that seeks only rows that can be valid then (no walk of superseded ones).
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
  db.prepare("UPDATE memories SET archived = 1 WHERE id = 'v3'").run();
  const attribute = factAttribute('Ann lives in Lima')!.attribute;
  const counts = db.prepare<[], { current: number; superseded: number }>(`SELECT count(*) FILTER (WHERE valid_until IS NULL) AS current,
    count(*) FILTER (WHERE valid_until IS NOT NULL) AS superseded FROM memories WHERE fact_attribute IS NOT NULL`).get()!;
  assert.ok(counts.superseded > 100 && counts.current >= 1, JSON.stringify(counts));

  const probes = new Set<number>([0, 2505, 20_000]);
  for (const at of [...moments, 2505, 10_000, 10_200]) for (const d of [-1, 0, 1]) probes.add(at + d);
  let nonEmpty = 0;
  for (const at of probes) {
    for (const limit of [1, 3, 16]) {
      for (let offset = 0; ; offset += limit) {
        const expected = reference.all(owner.id, attribute, at, at, limit, offset);
        const actual = runNow(rows.factsValidAt(owner.id, attribute, at, offset, limit));
        assert.deepEqual(actual, expected, `at ${at}, limit ${limit}, offset ${offset}`);
        if (expected.length > 0) nonEmpty++;
        if (expected.length < limit) break;
      }
    }
  }
  // Some moments must see several valid values (repeats, the same-moment pair) for the pages to be tested.
  const pair = runNow(rows.factsValidAt(owner.id, attribute, 2506, 0, 16)).map((f) => f.id);
  assert.ok(pair.includes('same-moment-a') && pair.includes('same-moment-b'), pair.join());
  assert.ok(nonEmpty > probes.size, `${nonEmpty} non-empty pages`);
});

test('facts valid at a moment are sought by validity, not by walking every earlier value', () => {
  const plan = db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${factsValidAtSource()}`)
    .all('ann', 'residence', 1, 'ann', 'residence', 1, 1, 0).map((r) => r.detail);
  const searches = plan.filter((d) => d.startsWith('SEARCH memories'));
  assert.equal(searches.length, 2, plan.join('\n'));
  assert.match(searches[0]!, /USING INDEX memories_valid_facts \(entity_id=\? AND fact_attribute=\? AND valid_until=\? AND occurred_at<\?\)/);
  assert.match(searches[1]!, /USING INDEX memories_valid_facts \(entity_id=\? AND fact_attribute=\? AND valid_until>\?\)/);
  assert.ok(!plan.some((d) => d.includes('memories_by_fact_attribute') || d.startsWith('SCAN')), plan.join('\n'));
});

/** The text of the statement factsValidAt runs, taken from the prepared statement the adapter holds. */
function factsValidAtSource(): string {
  const held = (rows as unknown as { s: { factsValidAt: (limit: number) => { source: string } } }).s;
  return held.factsValidAt(16).source;
}
