// A row's token count read from FTS5's docsize blob three ways (the reader's JavaScript, migration
// 8's hex SQL, the blob SQL of later triggers) must agree for every varint length, or one
// namespace's BM25 statistics would drift from what FTS5 itself counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { docSizeBlobTokensSql, docSizeTokens, docSizeTokensSql } from '../src/shared/fts-doc-size.js';

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
