// Group commit under a storage failure: when SQLite rolls the whole transaction back (here
// SQLITE_FULL from a page limit), the batch fails as a unit — no command reports success and
// none is left committed on its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { batchRunner, BatchRolledBack } from '../src/writer/sqlite/batch.js';
import type { WriterCommand, WriterRequest } from '../src/shared/protocol/writer.js';

function setup() {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  // Commands carry the text to insert in `fact`; 'boom' fails like a bad command would.
  const execute = (command: WriterCommand) => {
    const text = (command as { fact: string }).fact;
    if (text === 'boom') throw new Error('bad command');
    insert.run(text);
    return text.length;
  };
  const request = (id: number, fact: string): WriterRequest => ({ id, namespace: 'default', command: { type: 'remember', entity: 'e', fact, confidence: 1 } });
  return { db, run: batchRunner(db, execute), request };
}

test('a failing command is undone alone; its neighbours commit', () => {
  const { db, run, request } = setup();
  const replies = run.immediate([request(1, 'a'), request(2, 'boom'), request(3, 'c')]);
  assert.deepEqual(replies.map((r) => r.ok), [true, false, true]);
  assert.deepEqual(db.prepare('SELECT v FROM t').pluck().all(), ['a', 'c']);
});

test('a full disk mid-batch fails the whole batch and leaves nothing committed', () => {
  const { db, run, request } = setup();
  run.immediate([request(1, 'seed')]);
  const pages = db.pragma('page_count', { simple: true }) as number;
  db.pragma(`max_page_count = ${pages + 2}`);
  assert.throws(
    () => run.immediate([request(1, 'small before'), request(2, 'x'.repeat(64 * 1024)), request(3, 'small after')]),
    // The cause's code survives the rollback: clients see STORAGE_FULL (507), not INTERNAL.
    (error: unknown) => error instanceof BatchRolledBack && error.code === 'STORAGE_FULL',
  );
  assert.equal(db.inTransaction, false);
  assert.deepEqual(db.prepare('SELECT v FROM t').pluck().all(), ['seed'], 'neither the earlier nor the later command stayed');
});
