// What a recall on this node must see (core/node-position.ts), from the writer's batch reports in
// commit order: the last commit's position; the primary while the last commit has none (its
// position could not be read after COMMIT); nothing to wait for before any commit, or on SQLite.
// End to end, with a writer that can never read its position: test/postgres-read-your-writes.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodePosition } from '../src/core/node-position.js';
import { READ_PRIMARY } from '../src/shared/wal-position.js';

test('follows the positions of committed batches', () => {
  const node = new NodePosition();
  assert.equal(node.readAfter, undefined, 'nothing committed: nothing to wait for');
  node.committed('0/16B3748');
  assert.equal(node.readAfter, '0/16B3748');
  node.committed('0/16B37A0');
  assert.equal(node.readAfter, '0/16B37A0');
});

test('a commit without a position sends recalls to the primary until a later commit has one', () => {
  const node = new NodePosition();
  node.committed('0/16B3748');
  node.committed(null);
  assert.equal(node.readAfter, READ_PRIMARY, 'the old position would let a replica without that commit serve the recall');
  node.committed(null);
  assert.equal(node.readAfter, READ_PRIMARY);
  node.committed('0/2000000');
  assert.equal(node.readAfter, '0/2000000', 'a later commit is further in the WAL than the one without a position');
});

test('a report with nothing to note changes nothing (SQLite, a flush that committed nothing)', () => {
  const node = new NodePosition();
  node.committed(undefined);
  assert.equal(node.readAfter, undefined);
  node.committed('0/5');
  node.committed(undefined);
  assert.equal(node.readAfter, '0/5');
  node.committed(null);
  node.committed(undefined);
  assert.equal(node.readAfter, READ_PRIMARY);
});

test('the very first commit without a position already sends recalls to the primary', () => {
  const node = new NodePosition();
  node.committed(null);
  assert.equal(node.readAfter, READ_PRIMARY);
});
