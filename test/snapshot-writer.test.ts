// The deletion snapshot writer on its own: the file is exactly JSON.stringify(snapshot), written
// in pieces (one memory at a time) so a snapshot larger than V8's longest string can be written,
// and every byte is written even when writeSync writes less than it was given.
import { after, afterEach, test, mock } from 'node:test';
import assert from 'node:assert/strict';
import fs, { closeSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { writeSnapshot, type SnapshotFile } from '../src/shared/snapshot-file.js';
import { readSnapshot } from '../src/cli/storage/snapshot-files.js';
import { tempDir } from './support/service.js';

const dir = tempDir('memrt-snapshot-');
after(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  mock.restoreAll();
  syncBuiltinESMExports();
});

function memory(i: number, dims = 8): Record<string, unknown> {
  return {
    rowid: i + 1, id: randomUUID(), namespace: 'default', memory_type: i % 2 ? 'semantic' : 'episodic',
    content: `fact ${i}: "quoted" \\ back\nline 東京 🙂 \u2028`, confidence: 0.8, stability: 1.5, created_at: 1_700_000_000_000 + i,
    entity_id: 'e1', episode_id: i % 2 ? null : 'ep1', archived: 0,
    links: [{ entity_id: 'e1', relation: 'owner' }],
    embedding: i % 3 === 0 ? null : Array.from({ length: dims }, (_, d) => Math.fround(Math.sin(i + d))),
  };
}

function snapshotOf(memories: Record<string, unknown>[]): SnapshotFile {
  return {
    format_version: 1, snapshot_id: randomUUID(), captured_at: new Date(0).toISOString(), namespace: 'default',
    entity: { id: 'e1', name: 'snap "user"', kind: 'user' }, embedder: 'hash:256', memories,
  };
}

test('the file is byte for byte JSON.stringify(snapshot), mode 0600, readable by the CLI', () => {
  for (const count of [0, 1, 5000]) {
    const snapshot = snapshotOf(Array.from({ length: count }, (_, i) => memory(i)));
    const written = writeSnapshot(dir, snapshot);
    assert.equal(readFileSync(written.path, 'utf8'), JSON.stringify(snapshot), `${count} memories`);
    assert.equal(statSync(written.path).mode & 0o777, 0o600);
    assert.equal(written.ownerOnly, true);
    assert.deepEqual(readSnapshot(written.path, snapshot.snapshot_id), JSON.parse(JSON.stringify(snapshot)));
  }
});

test('memories may come from any iterable, one at a time', () => {
  const rows = Array.from({ length: 10 }, (_, i) => memory(i));
  const snapshot = snapshotOf(rows);
  const written = writeSnapshot(dir, { ...snapshot, memories: (function* () { yield* rows; })() });
  assert.equal(readFileSync(written.path, 'utf8'), JSON.stringify(snapshot));
});

test('short writes: writeSync is called until every byte is written', () => {
  const realWriteSync = fs.writeSync;
  let calls = 0;
  // At most 7 bytes per call, the way a nearly full disk or an interrupted write may behave.
  mock.method(fs, 'writeSync', (fd: number, data: string | NodeJS.ArrayBufferView, offset?: number, length?: number) => {
    calls++;
    const buffer = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const start = typeof data === 'string' ? 0 : (offset ?? 0);
    const available = typeof data === 'string' ? buffer.length : (length ?? buffer.length - start);
    return realWriteSync(fd, buffer, start, Math.min(7, available));
  });
  syncBuiltinESMExports();
  const snapshot = snapshotOf(Array.from({ length: 20 }, (_, i) => memory(i)));
  const written = writeSnapshot(dir, snapshot);
  assert.ok(calls > 100, `${calls} writes`);
  assert.equal(readFileSync(written.path, 'utf8'), JSON.stringify(snapshot));
});

test('a write that makes no progress fails the snapshot and leaves no partial file', () => {
  const realWriteSync = fs.writeSync;
  let calls = 0;
  mock.method(fs, 'writeSync', (fd: number, data: NodeJS.ArrayBufferView, offset?: number, length?: number) =>
    ++calls === 1 ? realWriteSync(fd, data, offset, Math.min(10, length ?? 10)) : 0);
  syncBuiltinESMExports();
  const snapshot = snapshotOf([memory(1)]);
  assert.throws(() => writeSnapshot(dir, snapshot), (error: any) => error.code === 'SNAPSHOT_FAILED' && /snapshot/.test(error.message));
  assert.ok(!readdirSync(dir).includes(`${snapshot.snapshot_id}.json`));
});

test("'wx': an existing snapshot file is never overwritten", () => {
  const snapshot = snapshotOf([memory(1)]);
  const first = writeSnapshot(dir, snapshot);
  assert.throws(() => writeSnapshot(dir, { ...snapshot, memories: [] }), (error: any) => error.code === 'SNAPSHOT_FAILED');
  assert.equal(readFileSync(first.path, 'utf8'), JSON.stringify(snapshot));
});

test('a snapshot longer than the longest V8 string is written', () => {
  // 8 × 64 Mi characters of content: more than a string can hold (2^29 - 24 characters), so
  // JSON.stringify of the whole snapshot throws "Invalid string length".
  const content = 'm'.repeat(64 * 1024 * 1024);
  const count = 8;
  const row = (i: number) => ({ id: `m${i}`, memory_type: 'episodic', content, confidence: 0.5, stability: 1, created_at: i, entity_id: 'e1', episode_id: null, links: [], embedding: null });
  const snapshot = snapshotOf([]);
  const written = writeSnapshot(dir, { ...snapshot, memories: (function* () { for (let i = 0; i < count; i++) yield row(i); })() });
  try {
    const { memories: _, ...header } = snapshot;
    const rows = Array.from({ length: count }, (_, i) => JSON.stringify(row(i)).length);
    const expected = JSON.stringify(header).length + '"memories":['.length + rows.reduce((a, b) => a + b, 0) + (count - 1) + ']}'.length;
    assert.ok(expected > 2 ** 29, 'the test really exceeds the string limit');
    assert.equal(statSync(written.path).size, expected);
    const head = JSON.stringify({ ...header, memories: [row(0)] }).slice(0, 300);
    const tail = JSON.stringify({ memories: [row(count - 1)] }).slice(-300);
    const fd = openSync(written.path, 'r');
    const read = (position: number) => {
      const buffer = Buffer.alloc(300);
      readSync(fd, buffer, 0, 300, position);
      return buffer.toString('utf8');
    };
    assert.equal(read(0), head);
    assert.equal(read(expected - 300), tail);
    closeSync(fd);
  } finally {
    rmSync(written.path, { force: true });
  }
});
