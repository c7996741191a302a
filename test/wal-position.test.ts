// pg_lsn text as the service parses and compares it (shared/wal-position.ts): the forms
// PostgreSQL accepts, and ordering by the 64-bit value, not the text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareWalPositions, furthestWalPosition, parseWalPosition } from '../src/shared/wal-position.js';

test('parses pg_lsn text into its 64-bit value', () => {
  assert.equal(parseWalPosition('0/0'), 0n);
  assert.equal(parseWalPosition('0/16B3748'), 0x16b3748n);
  assert.equal(parseWalPosition('0/16b3748'), 0x16b3748n, 'either case, as pg_lsn accepts');
  assert.equal(parseWalPosition('1/0'), 1n << 32n);
  assert.equal(parseWalPosition('FFFFFFFF/FFFFFFFF'), (1n << 64n) - 1n);
  assert.equal(parseWalPosition('00000000/00000001'), 1n, 'eight digits a half, leading zeros allowed');
});

test('refuses anything pg_lsn would not accept', () => {
  for (const bad of ['', '0', '/', '0/', '/0', '0/0/0', 'x/0', '0/g', '123456789/0', '0/123456789', ' 0/1', '0/1 ', '-1/0', '0x1/0', 'primary']) {
    assert.equal(parseWalPosition(bad), null, JSON.stringify(bad));
  }
});

test('compares by value, not by text', () => {
  assert.equal(compareWalPositions('0/9', '0/10'), -1, '0/9 is behind 0/10 although "9" > "1"');
  assert.equal(compareWalPositions('0/A', '0/a'), 0);
  assert.equal(compareWalPositions('1/0', '0/FFFFFFFF'), 1, 'the high half counts first');
  assert.equal(compareWalPositions('0/16B3748', '0/16B3749'), -1);
  assert.throws(() => compareWalPositions('0/1', 'nope'), TypeError);
});

test('furthest of two positions, either possibly absent', () => {
  assert.equal(furthestWalPosition(undefined, undefined), undefined);
  assert.equal(furthestWalPosition('0/5', undefined), '0/5');
  assert.equal(furthestWalPosition(undefined, '0/5'), '0/5');
  assert.equal(furthestWalPosition('0/9', '0/10'), '0/10');
  assert.equal(furthestWalPosition('1/0', '0/FFFFFFFF'), '1/0');
  assert.equal(furthestWalPosition('0/7', '0/7'), '0/7');
});
