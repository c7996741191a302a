// A flush indexes its rows' text once, before COMMIT (writer/sqlite/deferred-text-index.ts):
// what it commits must be what the row-by-row triggers commit, whatever the flush's commands did
// to their own rows (added, rewrote, deleted, or failed after adding).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempDir } from './support/service.js';
import { memoryInserter } from './support/rows.js';
import { openDatabase, type Db } from '../src/shared/db.js';
import type { WriterCommand, WriterRequest } from '../src/shared/protocol/writer.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { batchRunner } from '../src/writer/sqlite/batch.js';
import { DeferredTextIndex } from '../src/writer/sqlite/deferred-text-index.js';

/** Steps on raw rows, each run as one command of a flush (or alone, through the triggers). */
type Step =
  | { insert: string; content: string; ns: 'one' | 'two' }
  | { rewrite: string; content: string; context?: string }
  | { remove: string }
  | { failAfterInserting: string };

function open(name: string): { db: Db; apply: (step: Step) => void } {
  const db = openDatabase(join(tempDir(), name), { readonly: false });
  migrate(db);
  const inserters = { one: memoryInserter(db, ensureNamespace(db, 'one')), two: memoryInserter(db, ensureNamespace(db, 'two')) };
  const apply = (step: Step): void => {
    if ('insert' in step) inserters[step.ns]({ id: step.insert, content: step.content });
    else if ('rewrite' in step) {
      db.prepare('UPDATE memories SET content = ?, context = ? WHERE id = ?').run(step.content, step.context ?? '', step.rewrite);
    } else if ('remove' in step) db.prepare('DELETE FROM memories WHERE id = ?').run(step.remove);
    else {
      inserters.one({ id: step.failAfterInserting, content: 'written by a command that then fails' });
      throw new Error('this command fails after its insert');
    }
  };
  return { db, apply };
}

/** What readers see of the text index: its integrity, every row's match set and the statistics. */
function committedText(db: Db) {
  db.exec("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)");
  const matches = (word: string) => db.prepare(`SELECT m.id FROM memories_fts f JOIN memories m ON m.rowid = f.rowid
    WHERE memories_fts MATCH ? ORDER BY m.id`).pluck().all(word);
  return {
    words: Object.fromEntries(['apricot', 'orchard', 'river', 'fails', 'previous', 'pear'].map((w) => [w, matches(w)])),
    docsize: db.prepare('SELECT count(*) FROM memories_fts_docsize').pluck().get(),
    stats: db.prepare('SELECT n.name, s.documents, s.tokens FROM namespace_text_stats s JOIN namespaces n ON n.id = s.namespace_id ORDER BY n.name').all(),
    deferred: db.prepare('SELECT count(*) FROM text_index_deferred').pluck().get(),
  };
}

const before: Step[] = [
  { insert: 'old-1', content: 'an apricot orchard by the river', ns: 'one' },
  { insert: 'old-2', content: 'the pear harvest', ns: 'two' },
];
const flush: Step[] = [
  { insert: 'new-1', content: 'apricot jam at the market', ns: 'one' },
  { failAfterInserting: 'failed-1' },
  { insert: 'new-2', content: 'gone before the commit', ns: 'two' },
  { remove: 'new-2' },
  { insert: 'new-3', content: 'first words, rewritten', ns: 'one' },
  { rewrite: 'new-3', content: 'an orchard of pear trees', context: 'the previous turn' },
  { remove: 'old-2' },
  { rewrite: 'old-1', content: 'a river walk' },
  { insert: 'new-4', content: 'apricot apricot apricot '.repeat(60), ns: 'two' },
];

test('a flush commits the same text index and statistics as the row-by-row triggers', () => {
  const byTriggers = open('triggers.db');
  for (const step of [...before, ...flush]) {
    try {
      byTriggers.db.transaction(() => byTriggers.apply(step))();
    } catch (error) {
      assert.match(String(error), /fails after its insert/);
    }
  }
  const byFlush = open('flush.db');
  for (const step of before) byFlush.apply(step);
  const steps = new Map<number, Step>(flush.map((step, i) => [i, step]));
  const run = batchRunner(byFlush.db, (command: WriterCommand) => byFlush.apply(steps.get((command as unknown as { step: number }).step)!),
    new DeferredTextIndex(byFlush.db));
  const batch: WriterRequest[] = flush.map((_, i) => ({ id: i, namespace: 'one', command: { step: i } as unknown as WriterCommand }));
  const replies = run.immediate(batch);
  assert.deepEqual(replies.map((r) => r.ok), flush.map((step) => !('failAfterInserting' in step)));

  const expected = committedText(byTriggers.db);
  assert.deepEqual(committedText(byFlush.db), expected);
  // The comparison is not empty: the flush's survivors are indexed as they stand, the rest not.
  assert.deepEqual(expected.words.apricot, ['new-1', 'new-4']);
  assert.deepEqual(expected.words.pear, ['new-3']);
  assert.deepEqual(expected.words.river, ['old-1']);
  assert.deepEqual(expected.words.fails, []);
  assert.equal(expected.deferred, 0);
  byTriggers.db.close();
  byFlush.db.close();
});
