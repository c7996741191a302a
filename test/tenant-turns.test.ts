// Deletes and restores take turns within a namespace only (issue 25 review): tenant B's restore
// or its queue of deletes of "maria" must neither hold back tenant A's delete of its own "maria"
// nor refuse it (409) — which would also tell A that B has a "maria". PostgreSQL's cluster turns
// are covered by test/postgres-deletion.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeleteRestoreTurns, MAX_WAITING_TURNS } from '../src/core/take-turns.js';
import { ServiceError } from '../src/shared/errors.js';

/** Work that runs until `finish()`; `started` says whether it has begun. */
function held() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const work = { started: false, finish, run: async () => { work.started = true; await done; return 'ok'; } };
  return work;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test("B's restore and B's queue of deletes of 'maria' neither hold back nor refuse A's delete of its own 'maria'", async () => {
  const turns = new DeleteRestoreTurns();
  const restoreB = held();
  const restoringB = turns.restore('tenant-b', restoreB.run);
  // B: one delete of maria waits behind B's restore, then MAX_WAITING_TURNS - 1 more: B's line for maria is full.
  const deletesB = Array.from({ length: MAX_WAITING_TURNS }, () => held());
  const deletingB = deletesB.map((d) => turns.delete('tenant-b', 'maria', d.run));
  await assert.rejects(turns.delete('tenant-b', 'maria', async () => 'ok'), (e: ServiceError) => e.code === 'ENTITY_BUSY');
  await tick();
  assert.ok(restoreB.started && deletesB.every((d) => !d.started), "B's deletes wait for B's restore");

  // A's delete of maria and A's restore start at once.
  const deleteA = held();
  const deletingA = turns.delete('tenant-a', 'maria', deleteA.run);
  await tick();
  assert.ok(deleteA.started, "A's delete does not wait for B's restore or B's deletes");
  deleteA.finish();
  assert.equal(await deletingA, 'ok');
  const restoreA = held();
  const restoringA = turns.restore('tenant-a', restoreA.run);
  await tick();
  assert.ok(restoreA.started, "A's restore does not wait for B's restore");
  restoreA.finish();
  await restoringA;

  // Within B the turns keep their order: the restore, then the deletes one by one.
  restoreB.finish();
  await restoringB;
  for (const [i, d] of deletesB.entries()) {
    await tick();
    assert.ok(d.started, `B's delete ${i + 1} runs`);
    assert.ok(deletesB.slice(i + 1).every((later) => !later.started), 'one delete of an entity at a time');
    d.finish();
    await deletingB[i];
  }
});

test("B's waiting restores do not make A's restore 409", async () => {
  const turns = new DeleteRestoreTurns();
  const running = held();
  const first = turns.restore('tenant-b', running.run);
  const waiting = Array.from({ length: MAX_WAITING_TURNS }, () => turns.restore('tenant-b', async () => 'ok'));
  await assert.rejects(turns.restore('tenant-b', async () => 'ok'), (e: ServiceError) => e.code === 'RESTORE_BUSY');
  assert.equal(await turns.restore('tenant-a', async () => 'mine'), 'mine');
  running.finish();
  await Promise.all([first, ...waiting]);
});
