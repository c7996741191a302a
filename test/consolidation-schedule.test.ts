// The background schedule: with SERVICE_CONSOLIDATE_INTERVAL_SECONDS set, consolidation runs
// without being asked, and shutdown stops it cleanly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { get, post, startTestService } from './support/service.js';
import { withDb } from './support/db.js';
import { DAY_MS } from '../src/shared/fsrs.js';

test('consolidation runs on its schedule and archives a memory made old', async () => {
  const t = await startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '1' });
  try {
    await post(t.base, '/v1/remember', { entity: 'sched', fact: 'Sched once visited Atlantis' });
    withDb(t, (db) => db.prepare('UPDATE memories SET last_access_at = last_access_at - ?').run(3650 * DAY_MS), { write: true });
    // Waits for the schedule; the deadline is generous and only guards against a hang. The run
    // counts itself once the writer has answered, a moment after its archive is visible to
    // /v1/stats: wait for both (CI once saw the stats at 0 with the counter still at 0).
    const deadline = Date.now() + 60_000;
    const settled = async () => (await get(t.base, '/v1/stats')).body.semantic_memories === 0 && t.service.consolidator.runs >= 1;
    while (!(await settled()) && Date.now() < deadline) await sleep(100);
    assert.equal((await get(t.base, '/v1/stats')).body.semantic_memories, 0);
    assert.ok(t.service.consolidator.runs >= 1);
  } finally {
    await t.close();
  }
});
