// A value that comes back ("moved back to Berlin"), its facts arriving in any order. The earlier
// Berlin fact is a different event from the later one; storing it must not be answered by the
// other row (de-duplication), or recall as of 2021 finds nothing — or, when Madrid arrives last,
// Madrid supersedes the only Berlin row and stays current (bench:supersession's shuffled timelines).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from './support/service.js';
import * as timeline from './support/timeline.js';
import { contents, iso, T2021, T2022, T2023 } from './support/timeline.js';

let t: TestService;
before(async () => { t = await startTestService(); });
after(() => t.close());

test('Berlin (2021) → Madrid (2022) → Berlin (2023), sent newest first: as of 2021 Berlin holds', async () => {
  const later = await timeline.remember(t.base, 'rv-bo', 'rv-bo lives in Berlin', T2023);
  await timeline.remember(t.base, 'rv-bo', 'rv-bo lives in Madrid', T2022);
  const earlier = await timeline.remember(t.base, 'rv-bo', 'rv-bo lives in Berlin', T2021);
  assert.notEqual(earlier.id, later.id, 'the 2021 fact got the 2023 row');
  assert.equal(earlier.occurred_at, iso(T2021));
  const query = 'where does rv-bo live';
  assert.deepEqual(contents(await timeline.recall(t.base, { query, entity: 'rv-bo', as_of: '2021-06-01T00:00:00Z' })), ['rv-bo lives in Berlin']);
});

test('the same order sent oldest first gives the same as-of answers (control)', async () => {
  await timeline.remember(t.base, 'rv-cy', 'rv-cy lives in Berlin', T2021);
  await timeline.remember(t.base, 'rv-cy', 'rv-cy lives in Madrid', T2022);
  await timeline.remember(t.base, 'rv-cy', 'rv-cy lives in Berlin', T2023);
  const query = 'where does rv-cy live';
  assert.deepEqual(contents(await timeline.recall(t.base, { query, entity: 'rv-cy', as_of: '2021-06-01T00:00:00Z' })), ['rv-cy lives in Berlin']);
  assert.deepEqual(contents(await timeline.recall(t.base, { query, entity: 'rv-cy', as_of: '2022-06-01T00:00:00Z' })), ['rv-cy lives in Madrid']);
});

test('Berlin (2021), Madrid (2022), Berlin (2023) in every order of arrival, same words: Berlin now, Berlin as of 2021, Madrid as of 2022', async () => {
  const facts = [['Berlin', T2021], ['Madrid', T2022], ['Berlin', T2023]] as const;
  const orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
  for (const [n, order] of orders.entries()) {
    const who = `rv-p${n}`;
    for (const i of order) await timeline.remember(t.base, who, `${who} lives in ${facts[i][0]}`, facts[i][1]);
    const query = `where does ${who} live`;
    const at = async (asOf?: string) => contents(await timeline.recall(t.base, { query, entity: who, ...(asOf ? { as_of: asOf } : {}) }));
    assert.deepEqual(await at(), [`${who} lives in Berlin`], `now, order ${order}`);
    assert.deepEqual(await at('2021-06-01T00:00:00Z'), [`${who} lives in Berlin`], `2021, order ${order}`);
    assert.deepEqual(await at('2022-06-01T00:00:00Z'), [`${who} lives in Madrid`], `2022, order ${order}`);
    const all = (await timeline.recall(t.base, { query, entity: who, include_superseded: true })).memories;
    assert.equal(all.filter((m: { valid_until: string | null }) => m.valid_until === null).length, 1, `one current value, order ${order}`);
  }
});

test('the same words again without a time of their own (now), or at the same time, are the same fact: reinforced, one row', async () => {
  const first = await timeline.remember(t.base, 'rv-dd', 'rv-dd lives in Berlin');
  const again = await timeline.remember(t.base, 'rv-dd', 'rv-dd lives in Berlin');
  assert.equal(again.id, first.id);
  const dated = await timeline.remember(t.base, 'rv-dd2', 'rv-dd2 lives in Berlin', T2021);
  assert.equal((await timeline.remember(t.base, 'rv-dd2', 'rv-dd2 lives in Berlin', T2021)).id, dated.id);
});
