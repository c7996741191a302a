// Event time survives the operator CLI's export → import into a fresh database (SQLite only:
// the CLI reads and writes the file offline): a chain stored in reverse comes back with every
// occurred_at, valid_until and superseded_by, so recall now, as_of and include_superseded answer alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { post, startTestService, tempDir } from './support/service.js';
import { runCli } from './support/cli.js';
import { assertChain, storeChain } from './support/timeline.js';

test('a supersession chain and episode times are kept through export and import', async () => {
  const dir = tempDir('memrt-time-export-');
  const source = join(dir, 'source.db');
  const copy = join(dir, 'copy.db');
  const out = join(dir, 'ns.jsonl');
  const t = await startTestService({ SERVICE_PATH: source });
  let episode: string;
  try {
    await storeChain(t.base, 'tx-ana', [2023, 2022, 2021]);
    episode = (await post(t.base, '/v1/episodes/start', { participants: ['tx-ana'], started_at: '2023-05-08T13:56:00+02:00' })).body.episode_id;
    await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'My quokka is called Pip', occurred_at: '2023-05-08T14:00:00+02:00' });
  } finally {
    await t.close();
  }
  const exported = await runCli(['export', '--db', source, '--output', out]);
  assert.equal(exported.code, 0, exported.stderr);
  const imported = await runCli(['import', out, '--db', copy]);
  assert.equal(imported.code, 0, imported.stderr);

  const t2 = await startTestService({ SERVICE_PATH: copy });
  try {
    await assertChain(t2.base, 'tx-ana');
    const turn = (await post(t2.base, '/v1/recall', { query: 'quokka Pip', types: ['episodic'] })).body.memories[0];
    assert.equal(turn.occurred_at, '2023-05-08T12:00:00.000+00:00');
    assert.equal(turn.role, 'user');
    const grouped = (await post(t2.base, '/v1/recall_grouped', { query: 'quokka Pip' })).body;
    assert.equal(grouped.groups.find((g: any) => g.session_id === episode).session_time, '2023-05-08T11:56:00.000+00:00');
  } finally {
    await t2.close();
  }
});
