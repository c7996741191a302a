// The writer serialises and batches: concurrent get-or-create yields one entity, and a burst
// of concurrent writes all lands.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { get, post, startTestService, type TestService } from './support/service.js';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(() => t.close());

test('200 concurrent POST /v1/entities for the same name return one id', async () => {
  const replies = await Promise.all(Array.from({ length: 200 }, () => post(t.base, '/v1/entities', { name: 'same-name' })));
  assert.ok(replies.every((r) => r.status === 201));
  assert.equal(new Set(replies.map((r) => r.body.id)).size, 1);
  assert.equal((await get(t.base, '/v1/stats')).body.entities, 1);
});

test('1,000 concurrent remembers all land, committed in batches', async () => {
  const before = { ...t.service.writer.stats };
  const replies = await Promise.all(
    Array.from({ length: 1000 }, (_, i) => post(t.base, '/v1/remember', { entity: `user-${i % 10}`, fact: `fact number ${i}` })),
  );
  assert.ok(replies.every((r) => r.status === 201));
  assert.equal(new Set(replies.map((r) => r.body.id)).size, 1000);
  const stats = (await get(t.base, '/v1/stats')).body;
  assert.equal(stats.semantic_memories, 1000);
  assert.equal(stats.entities, 11);
  const commands = t.service.writer.stats.commands - before.commands;
  const transactions = t.service.writer.stats.transactions - before.transactions;
  assert.ok(commands >= 1000, `${commands} commands`); // plus the embedding backfill's own
  assert.ok(transactions < commands / 2, `group commit: ${commands} commands in ${transactions} transactions`);
  assert.ok(t.service.writer.stats.largestBatch > 1);
});
