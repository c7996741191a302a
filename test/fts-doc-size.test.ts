// A row's token count read from FTS5's docsize blob three ways (the reader's JavaScript, migration
// 8's hex SQL, the blob SQL of later triggers) must agree for every varint length, or one
// namespace's BM25 statistics would drift from what FTS5 itself counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { docSizeBlobTokensSql, docSizeTokens, docSizeTokensSql } from '../src/shared/fts-doc-size.js';
import { openDatabase } from '../src/shared/db.js';
import { MIGRATIONS } from '../src/shared/sql-schema.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { memoryInserter } from './support/rows.js';

/** SQLite's varint (as FTS5 writes a column size): 7 bits a byte, high bit set on all but the last. */
function varint(value: number): number[] {
  const bytes = [value & 0x7f];
  for (let rest = Math.floor(value / 128); rest > 0; rest = Math.floor(rest / 128)) bytes.unshift((rest & 0x7f) | 0x80);
  return bytes;
}

test('the blob and hex SQL forms count the tokens the JavaScript reader counts, for 1- to 3-byte sizes', () => {
  const db = new Database(':memory:');
  const viaHex = db.prepare(`SELECT ${docSizeTokensSql('hex(@b)')}`).pluck();
  const viaBlob = db.prepare(`SELECT ${docSizeBlobTokensSql('@b')}`).pluck();
  const sizes = [0, 1, 5, 127, 128, 129, 255, 256, 1000, 16_383, 16_384, 16_385, 99_999, 100_000];
  let compared = 0;
  for (const content of sizes) {
    for (const context of sizes) {
      const blob = Buffer.from([...varint(content), ...varint(context)]);
      assert.equal(docSizeTokens(blob), content + context, `js ${content}+${context}`);
      assert.equal(viaHex.get({ b: blob }), content + context, `hex ${content}+${context}`);
      assert.equal(viaBlob.get({ b: blob }), content + context, `blob ${content}+${context}`);
      compared++;
    }
  }
  assert.equal(compared, sizes.length ** 2);
  db.close();
});

test('a file at schema 10 upgrades to the blob-reading triggers with its statistics still exact', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memrt-docsize-'));
  const db = openDatabase(join(dir, 'upgrade.db'), { readonly: false });
  try {
    migrate(db);
    // Schema 10 as a previous release left it: migration 8's triggers, the occurrence index.
    const migration8 = MIGRATIONS[7]!;
    db.exec(migration8.slice(migration8.indexOf('DROP TRIGGER memories_fts_insert;')));
    db.exec('CREATE INDEX memories_by_occurrence ON memories(namespace_id, occurred_at)');
    // Nor had it migration 14's vector stamp.
    db.exec('DROP INDEX memories_by_vector_seq; ALTER TABLE memories DROP COLUMN vector_seq');
    db.pragma('user_version = 10');
    const ns = ensureNamespace(db, 'one');
    const insert = memoryInserter(db, ns);
    insert({ id: 'before-1', content: 'written under the old triggers' });
    insert({ id: 'before-2', content: 'word '.repeat(200) });
    migrate(db);
    assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.length);
    assert.equal(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'memories_by_occurrence'").pluck().get(), 0);
    const later = insert({ id: 'after-1', content: 'and one under the new ones' });
    insert({ id: 'after-2', content: 'x '.repeat(20000) });
    db.prepare("UPDATE memories SET context = 'a previous turn' WHERE rowid = ?").run(later);
    db.prepare("DELETE FROM memories WHERE id = 'before-1'").run();
    const recount = (db.prepare('SELECT d.sz FROM memories m JOIN memories_fts_docsize d ON d.id = m.rowid WHERE m.namespace_id = ?')
      .pluck().all(ns) as Buffer[]).reduce((sum, sz) => sum + docSizeTokens(sz), 0);
    assert.deepEqual(db.prepare('SELECT documents, tokens FROM namespace_text_stats WHERE namespace_id = ?').get(ns),
      { documents: 3, tokens: recount });
    assert.equal(recount, 200 + 6 + 3 + 20000);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
