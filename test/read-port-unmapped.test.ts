// workers/open-read-port.ts unmappedDuring: the thread's connection drops its map for the work (the
// warm-up) and maps the file again for the next read, also when the work throws.
// Observed from outside SQLite: /proc/self/maps lists the file while a connection has it mapped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { migrate } from '../src/writer/sqlite/migrate.js';
import { loadConfig } from '../src/shared/config.js';
import { openReadPorts } from '../src/workers/open-read-port.js';

const mapped = (path: string) => readFileSync('/proc/self/maps', 'utf8').split('\n').some((line) => line.endsWith(path));

test('unmappedDuring unmaps for the work and maps again after it, also when the work throws', { skip: process.platform !== 'linux' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'probe-unmapped-'));
  const path = join(dir, 'memory.db');
  const writer = openDatabase(path, { readonly: false });
  migrate(writer);
  writer.prepare("INSERT INTO namespaces (name, created_at) VALUES ('default', 0)").run();
  writer.pragma('wal_checkpoint(TRUNCATE)');
  const writerMap = writer.pragma('mmap_size', { simple: true });
  const ports = openReadPorts(loadConfig({ SERVICE_PATH: path, SERVICE_READ_MMAP_BYTES: String(64 * 2 ** 20) }));
  try {
    assert.equal(writerMap, 0, 'the writer maps nothing (else /proc/self/maps says nothing)');
    assert.notEqual(await ports.directory.idOf('default'), undefined);
    assert.ok(mapped(path), 'a read maps the file');
    await ports.unmappedDuring(async () => {
      await ports.directory.idOf('default');
      assert.ok(!mapped(path), 'unmapped during the work');
    });
    await ports.directory.idOf('default');
    assert.ok(mapped(path), 'mapped again after the work');
    await assert.rejects(ports.unmappedDuring(async () => {
      await ports.directory.idOf('default');
      assert.ok(!mapped(path));
      throw new Error('warm-up failed');
    }), /warm-up failed/);
    await ports.directory.idOf('default');
    assert.ok(mapped(path), 'mapped again after work that threw');
  } finally {
    await ports.close();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
