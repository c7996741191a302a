// A 5xx never carries internal text to the client: a recall_grouped whose pool task fails on a
// broken database answers RECALL_FAILED with its fixed message, not SQLite's text or the path.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { post, startTestService, type TestService } from './support/service.js';
import { withDb } from './support/db.js';
import { fail } from '../src/shared/errors.js';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(() => t.close());

test('recall_grouped failing inside the pool answers 500 RECALL_FAILED with the fixed message only', async () => {
  const started = await post(t.base, '/v1/episodes/start', { participants: ['ada'] });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  assert.equal((await post(t.base, `/v1/episodes/${started.body.episode_id}/message`, { role: 'user', content: 'kayaks on the lake' })).status, 200);
  withDb(t, (db) => db.exec('ALTER TABLE episodes RENAME TO episodes_x'), { write: true });

  const r = await post(t.base, '/v1/recall_grouped', { query: 'kayaks' });
  assert.equal(r.status, 500, JSON.stringify(r.body));
  assert.deepEqual(r.body, { error: fail.recallFailed().message, code: 'RECALL_FAILED' });
  assert.doesNotMatch(r.body.error, /episodes|SQLITE|memory\.db|object Object/);
});
