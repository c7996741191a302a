// A value that comes back ("moved back to Berlin"), with its facts arriving newest first. The
// earlier Berlin fact is a different event from the later one; storing it must not be answered
// by the later row (de-duplication), or recall as of 2021 finds nothing.
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
