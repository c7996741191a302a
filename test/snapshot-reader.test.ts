// Reading a line-framed deletion snapshot a bounded chunk at a time (shared/snapshot-reader.ts),
// the listing's header-and-summary reads, and files written before the framing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { snapshotPath, writeSnapshot, type SnapshotFile } from '../src/shared/snapshot-file.js';
import { checkSnapshotById, closeChecked, listSnapshots, rememberedSummaries, RESTORE_CHUNK } from '../src/shared/snapshot-files.js';
import { MAX_LINE_BYTES, openFramed, openSnapshotFile, readMemories, SnapshotFileError, withSnapshotFile } from '../src/shared/snapshot-reader.js';
import { MAX_CONTENT_LENGTH } from '../src/shared/schemas.js';
import { MAX_EMBEDDING_DIMENSIONS } from '../src/shared/config.js';
import { tempDir } from './support/service.js';

const dir = tempDir('memrt-snapshot-reader-');

function memory(i: number): Record<string, unknown> {
  return {
    id: randomUUID(), memory_type: ['semantic', 'episodic', 'procedural'][i % 3], content: `fact ${i}\nwith a line break`, confidence: 0.5,
    stability: 1, created_at: i, entity_id: 'e1', episode_id: null, links: [{ entity_id: 'e1', relation: 'owner' }],
    embedding: i % 2 ? [0.1, 0.2, 0.3, 0.4] : null,
  };
}

function snapshotOf(count: number): SnapshotFile & { memories: Record<string, unknown>[] } {
  return {
    format_version: 1, snapshot_id: randomUUID(), captured_at: new Date(count).toISOString(), namespace: 'default',
    entity: { id: 'e1', name: 'reader', kind: 'user' }, embedder: null, memories: Array.from({ length: count }, (_, i) => memory(i)),
  };
}

test('memories come back in chunks of at most RESTORE_CHUNK, all of them, in order', () => {
  const snapshot = snapshotOf(1234);
  const { path } = writeSnapshot(dir, snapshot);
  const file = openSnapshotFile(path);
  const framed = openFramed(file, snapshot.snapshot_id)!;
  assert.deepEqual(framed.summary, { memory_count: 1234, counts: { episodic: 411, semantic: 412, procedural: 411 }, vectors: 617 });
  assert.equal(framed.header.entity.name, 'reader');
  const ids: string[] = [];
  for (let from = framed.memoriesStart; from < framed.memoriesEnd;) {
    const chunk = readMemories(file, framed, from, RESTORE_CHUNK);
    assert.ok(chunk.memories.length > 0 && chunk.memories.length <= RESTORE_CHUNK.memories);
    ids.push(...chunk.memories.map((m) => m.id));
    from = chunk.next;
  }
  assert.deepEqual(ids, snapshot.memories.map((m) => m.id));
  closeSync(file.fd);
  const checked = checkSnapshotById(dir, snapshot.snapshot_id);
  assert.deepEqual(checked.framed, framed);
  closeChecked(checked);
});

test('a damaged memory line, a cut-short file or a wrong summary is refused by the check', () => {
  for (const damage of [
    (text: string) => text.replace('"content":"fact 700', '"content":fact 700'),
    (text: string) => text.slice(0, Math.floor(text.length / 2)),
    (text: string) => text.replace('"memory_count":900', '"memory_count":901'),
    (text: string) => text.replace('\n,{"id"', '\n{"id"'),
  ]) {
    const snapshot = snapshotOf(900);
    const { path } = writeSnapshot(dir, snapshot);
    writeFileSync(path, damage(readFileSync(path, 'utf8')));
    assert.throws(() => checkSnapshotById(dir, snapshot.snapshot_id), (error) => error instanceof SnapshotFileError && error.kind === 'unusable');
    const listed = listSnapshots(dir).find((s) => s.snapshot_id === snapshot.snapshot_id)!;
    assert.ok(listed, 'still listed');
    rmSync(path);
  }
});

test('a file written before the framing (one line, no summary) is read whole and listed with its counts', () => {
  const snapshot = snapshotOf(10);
  const path = snapshotPath(dir, snapshot.snapshot_id);
  writeFileSync(path, JSON.stringify(snapshot));
  assert.equal(withSnapshotFile(path, (file) => openFramed(file, snapshot.snapshot_id)), null);
  const checked = checkSnapshotById(dir, snapshot.snapshot_id);
  assert.equal(checked.whole!.memories.length, 10);
  const listed = listSnapshots(dir).find((s) => s.snapshot_id === snapshot.snapshot_id)!;
  assert.deepEqual([listed.memory_count, listed.counts, listed.vectors, listed.problem], [10, { episodic: 3, semantic: 4, procedural: 3 }, 5, null]);
  rmSync(path);
});

test('listing a framed file reads its header and summary lines only', () => {
  const snapshot = snapshotOf(50);
  const { path } = writeSnapshot(dir, snapshot);
  // Damage a memory line: the listing does not read it (the restore's check would refuse it).
  writeFileSync(path, readFileSync(path, 'utf8').replace('"content":"fact 25', '"content":fact 25'));
  const listed = listSnapshots(dir).find((s) => s.snapshot_id === snapshot.snapshot_id)!;
  assert.deepEqual([listed.memory_count, listed.problem], [50, null]);
  rmSync(path);
});

test('the listing remembers one summary per older file: a changed file replaces its entry, a removed one leaves', () => {
  const snapshot = snapshotOf(10);
  const path = snapshotPath(dir, snapshot.snapshot_id);
  const before = rememberedSummaries();
  for (let change = 1; change <= 5; change++) {
    writeFileSync(path, JSON.stringify({ ...snapshot, memories: snapshot.memories.slice(0, change) }));
    const listed = listSnapshots(dir).find((s) => s.snapshot_id === snapshot.snapshot_id)!;
    assert.equal(listed.memory_count, change);
    assert.equal(rememberedSummaries(), before + 1);
  }
  rmSync(path);
  listSnapshots(dir);
  assert.equal(rememberedSummaries(), before);
});

test('an older file replaced by one of the same size and modification time (cp -p) is read again', () => {
  const snapshot = snapshotOf(10);
  const path = snapshotPath(dir, snapshot.snapshot_id);
  const named = (name: string) => JSON.stringify({ ...snapshot, entity: { ...snapshot.entity, name } });
  writeFileSync(path, named('alpha'));
  const mtime = new Date(1_700_000_000_000);
  utimesSync(path, mtime, mtime);
  assert.equal(listSnapshots(dir).find((s) => s.snapshot_id === snapshot.snapshot_id)!.entity, 'alpha');
  writeFileSync(`${path}.new`, named('bravo'));
  utimesSync(`${path}.new`, mtime, mtime);
  renameSync(`${path}.new`, path);
  assert.equal(statSync(path).mtimeMs, mtime.getTime());
  assert.equal(listSnapshots(dir).find((s) => s.snapshot_id === snapshot.snapshot_id)!.entity, 'bravo');
  rmSync(path);
});

test('the longest memory the service can hold reads back; a longer content or line is damage', () => {
  // Every character escaped by JSON (\u0001: 6 bytes), the largest vector with long numbers, 100 links.
  const longest = {
    ...snapshotOf(1).memories[0]!, content: '\u0001'.repeat(MAX_CONTENT_LENGTH),
    embedding: Array.from({ length: MAX_EMBEDDING_DIMENSIONS }, (_, i) => -(i + 1) * 1.2345678901234567e-300),
    links: Array.from({ length: 100 }, (_, i) => ({ entity_id: randomUUID(), relation: i === 0 ? 'owner' : 'participant' })),
  };
  assert.ok(JSON.stringify(longest).length < MAX_LINE_BYTES);
  const fits = { ...snapshotOf(0), memories: [longest] };
  writeSnapshot(dir, fits);
  const checked = checkSnapshotById(dir, fits.snapshot_id);
  closeChecked(checked);
  assert.equal(checked.framed!.summary.memory_count, 1);
  const tooLong = { ...snapshotOf(0), memories: [{ ...longest, content: 'x'.repeat(MAX_CONTENT_LENGTH + 1) }] };
  writeSnapshot(dir, tooLong);
  assert.throws(() => checkSnapshotById(dir, tooLong.snapshot_id), (error) => error instanceof SnapshotFileError && error.kind === 'unusable');
  // A damaged file of NULs and no line break is refused once past the bound, not buffered whole.
  const nuls = { ...snapshotOf(0), memories: [longest] };
  const { path } = writeSnapshot(dir, nuls);
  const text = readFileSync(path, 'utf8');
  const firstLine = text.indexOf('\n') + 1;
  writeFileSync(path, Buffer.concat([Buffer.from(text.slice(0, firstLine)), Buffer.alloc(MAX_LINE_BYTES + 1), Buffer.from(text.slice(text.lastIndexOf('\n', text.length - 2)))]));
  assert.throws(() => checkSnapshotById(dir, nuls.snapshot_id), (error) => error instanceof SnapshotFileError && error.kind === 'unusable');
  for (const s of [fits, tooLong, nuls]) rmSync(snapshotPath(dir, s.snapshot_id));
});
