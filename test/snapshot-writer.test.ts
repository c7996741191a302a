// The deletion snapshot writer on its own: the file is the snapshot's JSON line-framed (header
// line, one line per memory, summary line), written in pieces (one memory at a time) so a
// snapshot larger than V8's longest string can be written, and every byte is written even when
// writeSync writes less than it was given.
import { afterEach, test, mock } from 'node:test';
import assert from 'node:assert/strict';
import fs, { closeSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { basename, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { writeSnapshot, type SnapshotFile } from '../src/shared/snapshot-file.js';
import { readSnapshot } from '../src/shared/snapshot-files.js';
import { RESTORE_CHUNK } from '../src/shared/snapshot-files.js';
import { openFramed, openSnapshotFile, readMemories } from '../src/shared/snapshot-reader.js';
import { MAX_CONTENT_LENGTH } from '../src/shared/schemas.js';
import { startTestService, tempDir } from './support/service.js';

const dir = tempDir('memrt-snapshot-');
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

/** The file's expected text: JSON.stringify(snapshot) plus its summary, a line per part. */
function framed(snapshot: SnapshotFile): string {
  const { memories, ...header } = snapshot;
  const rows = [...memories];
  const summary = {
    memory_count: rows.length,
    counts: Object.fromEntries(['episodic', 'semantic', 'procedural'].map((type) => [type, rows.filter((m) => m.memory_type === type).length])),
    vectors: rows.filter((m) => m.embedding !== null).length,
  };
  return `${JSON.stringify(header).slice(0, -1)},"memories":[\n${rows.map((m, i) => `${i ? ',' : ''}${JSON.stringify(m)}\n`).join('')}` +
    `],"summary":${JSON.stringify(summary)}}\n`;
}

test('the file is the snapshot as JSON, a line per memory, with its summary; mode 0600, readable by the CLI', () => {
  for (const count of [0, 1, 5000]) {
    const snapshot = snapshotOf(Array.from({ length: count }, (_, i) => memory(i)));
    const written = writeSnapshot(dir, snapshot);
    const text = readFileSync(written.path, 'utf8');
    assert.equal(text, framed(snapshot), `${count} memories`);
    assert.equal(text.split('\n').length, count + 3, 'header line, a line per memory, summary line, final newline');
    const { summary, ...document } = JSON.parse(text);
    assert.deepEqual(document, JSON.parse(JSON.stringify(snapshot)), 'still the one JSON document older versions wrote');
    assert.equal(summary.memory_count, count);
    assert.equal(statSync(written.path).mode & 0o777, 0o600);
    assert.equal(written.ownerOnly, true);
    const { summary: _, ...read } = readSnapshot(written.path, written.path, snapshot.snapshot_id) as Record<string, unknown>;
    assert.deepEqual(read, JSON.parse(JSON.stringify(snapshot)));
  }
});

test('memories may come from any iterable, one at a time', () => {
  const rows = Array.from({ length: 10 }, (_, i) => memory(i));
  const snapshot = snapshotOf(rows);
  const written = writeSnapshot(dir, { ...snapshot, memories: (function* () { yield* rows; })() });
  assert.equal(readFileSync(written.path, 'utf8'), framed(snapshot));
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
  assert.equal(readFileSync(written.path, 'utf8'), framed(snapshot));
});

test('a write that makes no progress fails the snapshot and leaves no partial file', () => {
  const realWriteSync = fs.writeSync;
  let calls = 0;
  mock.method(fs, 'writeSync', (fd: number, data: NodeJS.ArrayBufferView, offset?: number, length?: number) =>
    ++calls === 1 ? realWriteSync(fd, data, offset, Math.min(10, length ?? 10)) : 0);
  syncBuiltinESMExports();
  const snapshot = snapshotOf([memory(1)]);
  assert.throws(() => writeSnapshot(dir, snapshot), (error: any) => error.code === 'SNAPSHOT_FAILED' && /snapshot/.test(error.message));
  assert.ok(!readdirSync(dir).some((name) => name.startsWith(snapshot.snapshot_id)), 'neither the snapshot nor its partial file');
});

test('while it is written the file has a temporary name no listing reads; it appears complete', () => {
  const realWriteSync = fs.writeSync;
  const seen: string[][] = [];
  mock.method(fs, 'writeSync', (fd: number, data: NodeJS.ArrayBufferView, offset?: number, length?: number) => {
    seen.push(readdirSync(dir));
    return realWriteSync(fd, data, offset, length);
  });
  syncBuiltinESMExports();
  const snapshot = snapshotOf(Array.from({ length: 3000 }, (_, i) => memory(i)));
  writeSnapshot(dir, snapshot);
  assert.ok(seen.length > 1);
  for (const names of seen) {
    assert.ok(!names.includes(`${snapshot.snapshot_id}.json`), 'not under its own name while being written');
    assert.ok(names.includes(`${snapshot.snapshot_id}.json.tmp`));
  }
  assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith(snapshot.snapshot_id)), [`${snapshot.snapshot_id}.json`]);
});

test("'wx': an existing snapshot file is never overwritten", () => {
  const snapshot = snapshotOf([memory(1)]);
  const first = writeSnapshot(dir, snapshot);
  assert.throws(() => writeSnapshot(dir, { ...snapshot, memories: [] }), (error: any) => error.code === 'SNAPSHOT_FAILED');
  assert.equal(readFileSync(first.path, 'utf8'), framed(snapshot));
});

test('a snapshot longer than the longest V8 string is written', () => {
  // 5,400 memories of the longest content (100,000 characters): more than a string can hold
  // (2^29 - 24 characters), so JSON.stringify of the whole snapshot throws "Invalid string length".
  const content = 'm'.repeat(MAX_CONTENT_LENGTH);
  const count = 5_400;
  const row = (i: number) => ({ id: `m${i}`, memory_type: 'episodic', content, confidence: 0.5, stability: 1, created_at: i, entity_id: 'e1', episode_id: null, links: [], embedding: null });
  const snapshot = snapshotOf([]);
  const written = writeSnapshot(dir, { ...snapshot, memories: (function* () { for (let i = 0; i < count; i++) yield row(i); })() });
  try {
    const { memories: _, ...header } = snapshot;
    const rows = Array.from({ length: count }, (_, i) => JSON.stringify(row(i)).length);
    const summaryLine = `],"summary":${JSON.stringify({ memory_count: count, counts: { episodic: count, semantic: 0, procedural: 0 }, vectors: 0 })}}\n`;
    const expected = JSON.stringify(header).length + ',"memories":[\n'.length - 1 + rows.reduce((a, b) => a + b, 0) + count + (count - 1) + summaryLine.length;
    assert.ok(expected > 2 ** 29, 'the test really exceeds the string limit');
    assert.equal(statSync(written.path).size, expected);
    const head = `${JSON.stringify(header).slice(0, -1)},"memories":[\n${JSON.stringify(row(0))}`.slice(0, 300);
    const tail = `${JSON.stringify(row(count - 1))}\n${summaryLine}`.slice(-300);
    const fd = openSync(written.path, 'r');
    const read = (position: number) => {
      const buffer = Buffer.alloc(300);
      readSync(fd, buffer, 0, 300, position);
      return buffer.toString('utf8');
    };
    assert.equal(read(0), head);
    assert.equal(read(expected - 300), tail);
    closeSync(fd);
    // And it is read back, a memory line at a time: the file is never one string.
    const file = openSnapshotFile(written.path);
    const opened = openFramed(file, snapshot.snapshot_id)!;
    assert.deepEqual(opened.summary.memory_count, count);
    let restored = 0;
    for (let from = opened.memoriesStart; from < opened.memoriesEnd;) {
      const chunk = readMemories(file, opened, from, RESTORE_CHUNK);
      assert.ok(chunk.memories.length > 0 && chunk.memories.length <= 42, 'a chunk holds about RESTORE_CHUNK.bytes of memories');
      assert.ok(chunk.memories.every((m) => m.content.length === content.length));
      restored += chunk.memories.length;
      from = chunk.next;
    }
    assert.equal(restored, count);
    closeSync(file.fd);
  } finally {
    rmSync(written.path, { force: true });
  }
});

test('the service removes partial snapshot files (.json.tmp) a crash left behind when it starts', async () => {
  const home = tempDir('memrt-sweep-');
  const folder = join(home, 'snapshots');
  fs.mkdirSync(folder);
  const kept = writeSnapshot(folder, snapshotOf([memory(1)]));
  // A crash between link and removal: the temporary name is a second link to a snapshot.
  fs.linkSync(kept.path, `${kept.path}.tmp`);
  fs.writeFileSync(join(folder, `${randomUUID()}.json.tmp`), '{"format_version":1,');
  const service = await startTestService({ SERVICE_PATH: join(home, 'memory.db') });
  try {
    assert.deepEqual(readdirSync(folder), [basename(kept.path)]);
    assert.equal(statSync(kept.path).nlink, 1);
  } finally {
    await service.close();
  }
});
