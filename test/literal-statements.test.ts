// Row counts and memory types spelled into SQL (shared/literal-statements.ts): only checked
// values reach the text, one prepared statement serves each value, and the set stays bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { integerLiteral, statementPerLimits, statementPerValues } from '../src/shared/literal-statements.js';

test('integerLiteral admits non-negative safe integers only', () => {
  assert.equal(integerLiteral(0), '0');
  assert.equal(integerLiteral(4001), '4001');
  for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, '1; DROP TABLE t' as unknown as number]) {
    assert.throws(() => integerLiteral(bad), RangeError, String(bad));
  }
});

test('statementPerLimits prepares once per combination and answers with the spelled limit', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (x INTEGER); WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 100) INSERT INTO t SELECT x FROM n');
  const firstRows = statementPerLimits<[], { x: number }>(db, (limit, offset) => `SELECT x FROM t ORDER BY x LIMIT ${limit} OFFSET ${offset}`);
  assert.deepEqual(firstRows(3, 0).all().map((r) => r.x), [1, 2, 3]);
  assert.deepEqual(firstRows(2, 5).all().map((r) => r.x), [6, 7]);
  assert.equal(firstRows(3, 0), firstRows(3, 0), 'the same statement for the same limits');
  assert.notEqual(firstRows(3, 0), firstRows(4, 0));
  assert.throws(() => firstRows(-1, 0), RangeError);
  const count = statementPerLimits<[], number>(db, (limit) => `SELECT count(*) FROM (SELECT 1 FROM t LIMIT ${limit})`, { pluck: true });
  assert.equal(count(7).get(), 7);
  db.close();
});

test('statementPerValues keeps a bounded set of prepared statements', () => {
  const db = new Database(':memory:');
  let prepared = 0;
  const echo = statementPerValues<number, [], number>(db, integerLiteral, (n) => {
    prepared++;
    return `SELECT ${n}`;
  });
  assert.throws(() => echo(-1), RangeError, 'the value is checked before it reaches the text');
  for (let round = 0; round < 3; round++) for (let n = 0; n < 5; n++) assert.equal(echo(n).pluck().get(), n);
  assert.equal(prepared, 5, 'prepared once each while the set fits');
  for (let n = 0; n < 100; n++) echo(n);
  const before = prepared;
  echo(0);
  assert.equal(prepared, before + 1, 'the least recently used were let go');
  db.close();
});
