// shared/db.ts unmapped: a read connection's memory map is off while a once-read pass runs (the
// codes build, a pool thread's warm-up) and back to what it was afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, unmapped } from '../src/shared/db.js';

test('the memory map is off until restored, then back to its size; an unmapped connection stays so', () => {
  const dir = mkdtempSync(join(tmpdir(), 'unmapped-'));
  const path = join(dir, 'm.db');
  const writer = openDatabase(path, { readonly: false });
  writer.exec('CREATE TABLE t (x)');
  const mapped = openDatabase(path, { readonly: true, mmapBytes: 64 * 2 ** 20 });
  const plain = openDatabase(path, { readonly: true, mmapBytes: 0 });
  const size = (db: typeof mapped) => db.pragma('mmap_size', { simple: true });
  try {
    assert.equal(size(mapped), 64 * 2 ** 20);
    const restore = unmapped(mapped);
    assert.equal(size(mapped), 0);
    assert.equal(mapped.prepare('SELECT count(*) FROM t').pluck().get(), 0);
    restore();
    assert.equal(size(mapped), 64 * 2 ** 20);
    const again = unmapped(plain);
    assert.equal(size(plain), 0);
    again();
    assert.equal(size(plain), 0);
  } finally {
    mapped.close();
    plain.close();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
