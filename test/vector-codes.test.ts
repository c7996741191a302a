// The in-memory int8 codes each pool thread scans instead of vec0 once a namespace is indexed:
// the WebAssembly kernel against plain arithmetic, the shortlist against exact cosines, the
// per-thread memory budget, and a real SQLite file read through the read port: codes kept
// current with the writer's inserts, deletions, re-embeddings and new generations, and one
// namespace's vectors never answering another's recall.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { blobOf } from '../src/shared/meta.js';
import { INSERT_VECTOR_SQL } from '../src/shared/sql-schema.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { prepareVectorTable } from '../src/writer/sqlite/vector-table.js';
import { SqliteCommands } from '../src/writer/sqlite/adapter.js';
import { Worker } from 'node:worker_threads';
import { Int8Kernel, queryLimit, sharedMemory, strideFor } from '../src/workers/ivf/int8-kernel.js';
import { CodesReader, CodesWriter, codeBytesFor, headroom, scoreRunFor, type SharedCodesHandle } from '../src/workers/ivf/vector-codes.js';
import { refreshVectorCodes } from '../src/workers/sqlite/vector-codes.js';
import { continueVectorSeq, nextVectorSeq } from '../src/writer/sqlite/vector-seq.js';
import { VectorCells } from '../src/workers/sqlite/ivf-cells.js';
import { KEEP_RECALLED_MS, RECALL_RETRY_MS, VectorCodesRegistry } from '../src/core/pool/vector-codes-registry.js';
import { createLogger } from '../src/shared/logger.js';
import { nearestCentroid, trainIndex } from '../src/workers/ivf/kmeans.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import type { RecallCodes } from '../src/workers/port/candidates.js';
import { Corpus } from '../bench/lib/corpus.js';
import { memoryInserter, unit } from './support/rows.js';
import { tempDir } from './support/service.js';

/** Deterministic numbers in [0, 1). */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i], 0);

/** One kernel over a fresh memory holding a query, `count` codes and their scales, and room for `count` records. */
function kernelFixture(dimensions: number, count: number) {
  const stride = strideFor(dimensions);
  const [queryAt, outAt, scalesAt] = [0, 2 * stride, 2 * stride + 16 * count];
  const codesAt = scalesAt + 4 * count;
  const memory = sharedMemory(codesAt + count * stride);
  assert.ok(memory, 'WebAssembly SIMD and shared memory are available in Node 20');
  const kernel = Int8Kernel.over(memory, stride)!;
  const query = new Int16Array(memory.buffer, queryAt, stride);
  const scales = new Float32Array(memory.buffer, scalesAt, count);
  const codes = new Int8Array(memory.buffer, codesAt, count * stride);
  /** The records the last call wrote: position in its run, score. */
  const records = (found: number) => Array.from({ length: found }, (_, k) => ({
    i: new Int32Array(memory.buffer, outAt, 4 * count)[4 * k],
    score: new Float64Array(memory.buffer, outAt, 2 * count)[2 * k + 1],
  }));
  /** Codes `from`..`from + n` of the fixture, above `threshold`. */
  const above = (threshold: number, from = 0, n = count) => records(kernel.above(queryAt, codesAt + from * stride, n, scalesAt + 4 * from, threshold, outAt));
  /** Σ query · code as plain integer arithmetic. */
  const dotOf = (i: number) => {
    let sum = 0;
    for (let d = 0; d < stride; d++) sum += query[d] * codes[i * stride + d];
    return sum;
  };
  return { stride, memory, outAt, query, scales, codes, above, dotOf };
}

describe('int8 kernel (above: the scan with the selection inside)', () => {
  for (const dimensions of [16, 256, 300, 512, 1536]) {
    test(`${dimensions}-d: every score equals plain integer arithmetic times the scale, extremes included, as 16-byte records of its run`, () => {
      const COUNT = 200;
      const f = kernelFixture(dimensions, COUNT);
      assert.equal(f.stride % 16, 0);
      assert.ok(f.stride >= dimensions && f.stride < dimensions + 16);
      const next = random(dimensions);
      const limit = queryLimit(f.stride);
      for (let d = 0; d < dimensions; d++) f.query[d] = Math.round((next() - 0.5) * 2 * limit);
      for (let i = 0; i < COUNT; i++) {
        f.scales[i] = i % 2 ? 1 : next() / 100;
        for (let d = 0; d < dimensions; d++) f.codes[i * f.stride + d] = Math.round((next() - 0.5) * 254);
      }
      const all = f.above(-Infinity);
      assert.equal(all.length, COUNT, 'every code is above −∞');
      for (let i = 0; i < COUNT; i++) {
        assert.equal(all[i].i, i);
        if (i % 2) assert.equal(all[i].score, f.dotOf(i), `vector ${i}: the int32 dot product`);
        assert.equal(all[i].score, f.dotOf(i) * f.scales[i], `vector ${i}: times its float32 scale, as float64`);
      }
      // Extremes: the largest magnitudes must not overflow.
      const query = Int16Array.from(f.query);
      for (let d = 0; d < dimensions; d++) [f.query[d], f.codes[d]] = [-limit, -127];
      assert.equal(f.above(-Infinity, 0, 1)[0].score, dimensions * 127 * limit * f.scales[0]);
      f.query.set(query);
      // A run further on: its own codes and scales, positions from its first code, nothing written past its records.
      const sentinel = new Uint8Array(f.memory.buffer, f.outAt + 16 * 10, 16).fill(0xab);
      const run = f.above(-Infinity, 50, 10);
      assert.deepEqual(run.map(({ i }) => i), Array.from({ length: 10 }, (_, i) => i));
      assert.deepEqual(run.map(({ score }) => score), Array.from({ length: 10 }, (_, i) => f.dotOf(50 + i) * f.scales[50 + i]));
      assert.ok(sentinel.every((byte) => byte === 0xab), 'a record written past the run');
      assert.deepEqual(f.above(-Infinity, 50, 0), [], 'an empty run writes nothing');
    });
  }

  for (const dimensions of [16, 256, 512]) {
    test(`${dimensions}-d: the codes above the threshold, with their scores, in order, and no others`, () => {
      const COUNT = 500;
      const f = kernelFixture(dimensions, COUNT);
      const next = random(dimensions + 1);
      const limit = queryLimit(f.stride);
      for (let d = 0; d < dimensions; d++) f.query[d] = Math.round((next() - 0.5) * 2 * limit);
      for (let i = 0; i < COUNT; i++) {
        f.scales[i] = next() / 100;
        for (let d = 0; d < dimensions; d++) f.codes[i * f.stride + d] = Math.round((next() - 0.5) * 254);
      }
      const expected = Array.from({ length: COUNT }, (_, i) => f.dotOf(i) * f.scales[i]);
      const sorted = [...expected].sort((a, b) => b - a);
      for (const threshold of [-Infinity, sorted[10], sorted[200], sorted[0], Infinity]) {
        const want = expected.map((score, i) => ({ i, score })).filter(({ score }) => score > threshold);
        assert.deepEqual(f.above(threshold), want, `threshold ${threshold}`);
      }
      const want = expected.slice(100, 150).map((score, i) => ({ i, score })).filter(({ score }) => score > sorted[100]);
      assert.deepEqual(f.above(sorted[100], 100, 50), want);
    });
  }

  test('ties and non-finite scores: equal to the threshold is not above it, equal scores all pass in order, NaN never does', () => {
    const COUNT = 8;
    const f = kernelFixture(32, COUNT);
    for (let d = 0; d < 32; d++) f.query[d] = d % 3 - 1;
    for (let i = 0; i < COUNT; i++) {
      f.scales[i] = 0.5;
      for (let d = 0; d < 32; d++) f.codes[i * f.stride + d] = (d * 7) % 11 - 5;
    }
    const tied = f.dotOf(0) * 0.5;
    assert.ok(tied > 0);
    assert.deepEqual(f.above(tied - 0.25).map(({ i }) => i), [0, 1, 2, 3, 4, 5, 6, 7], 'equal scores: every one, in scan order');
    assert.deepEqual(f.above(tied), [], 'a score equal to the threshold is not above it (the heap keeps the first of a tie)');
    f.scales[2] = NaN;
    f.scales[3] = Infinity;
    f.scales[4] = -Infinity;
    f.scales[5] = 0;
    f.codes.fill(0, 6 * f.stride, 7 * f.stride); // a zero code
    f.scales[6] = Infinity; // 0 × ∞: NaN (what a vector with an infinite component is coded as)
    const found = f.above(-Infinity);
    assert.deepEqual(found.map(({ i }) => i), [0, 1, 3, 5, 7], 'a NaN score is never above, not even −∞ (nor is −∞ itself)');
    assert.equal(found.find(({ i }) => i === 3)!.score, Infinity);
    assert.equal(found.find(({ i }) => i === 5)!.score, 0);
    assert.deepEqual(f.above(NaN), [], 'nothing is above a NaN threshold');
  });
});

describe('shared vector codes', () => {
  const DIMENSIONS = 64;
  const next = random(7);
  const vectors = Array.from({ length: 3000 }, () => unit(Array.from({ length: DIMENSIONS }, () => next() - 0.5)));
  const cellOf = (i: number) => 10 + (i % 6);
  const exactIn = (query: Float32Array, probed: number[], n: number) => vectors.map((v, i) => ({ rowid: 1000 + i, similarity: dot(query, v) }))
    .filter(({ rowid }) => probed.includes(cellOf(rowid - 1000)))
    .sort((a, b) => b.similarity - a.similarity).slice(0, n).map(({ rowid }) => rowid);

  /** Half in cell order (a full build), the rest appended after the store was handed out. */
  function store(): SharedCodesHandle {
    const writer = CodesWriter.create(DIMENSIONS, vectors.length, 8, [1], 0)!;
    const order = vectors.map((_, i) => i).sort((a, b) => cellOf(a) - cellOf(b) || a - b);
    const half = order.filter((i) => i % 2 === 0);
    for (const i of half) assert.ok(writer.add({ rowid: 1000 + i, cell: cellOf(i), vector: vectors[i] }));
    const handle = writer.publish(vectors.length);
    const later = CodesWriter.resume(handle);
    for (let i = 1; i < vectors.length; i += 2) assert.ok(later.add({ rowid: 1000 + i, cell: cellOf(i), vector: vectors[i] }));
    assert.equal(later.unordered, vectors.length / 2);
    return later.publish(vectors.length);
  }

  test('the shortlist holds the exact nearest of the probed cells, and nothing from the others', () => {
    const reader = CodesReader.attach(store())!;
    assert.equal(reader.size, vectors.length);
    for (let q = 0; q < 20; q++) {
      const query = vectors[q * 37];
      const probed = [10, 12, 13];
      const shortlist = reader.nearest(query, probed, 40)!.rowids;
      assert.equal(shortlist.length, 40);
      for (const rowid of shortlist) assert.ok(probed.includes(cellOf(rowid - 1000)), 'a vector of an unprobed cell');
      const exact = exactIn(query, probed, 10);
      assert.equal(shortlist[0], exact[0], 'the query itself comes first');
      for (const rowid of exact) assert.ok(shortlist.includes(rowid), `exact neighbour ${rowid} missing from the shortlist`);
    }
  });

  test('the shortlist says how close its last code is when the cells hold more, and −∞ when they hold no more', () => {
    const reader = CodesReader.attach(store())!;
    const probed = [10, 12];
    const inCells = vectors.filter((_, i) => probed.includes(cellOf(i))).length;
    for (let q = 0; q < 10; q++) {
      const query = vectors[q * 53];
      const { rowids, lastSimilarity } = reader.nearest(query, probed, 40)!;
      // The cosine of the last one kept, by its int8 code: within a few thousandths of its vector's.
      const exact = dot(query, vectors[rowids.at(-1)! - 1000]);
      assert.ok(Math.abs(lastSimilarity() - exact) < 0.01, `last kept: code ${lastSimilarity()}, vector ${exact}`);
      assert.equal(reader.nearest(query, probed, inCells + 1)!.lastSimilarity(), -Infinity, 'every code of the cells kept: nothing more to find');
      assert.equal(reader.nearest(query, probed, inCells)!.rowids.length, inCells);
    }
  });

  test('the scratch follows the store (its mean cell), and the shortlist is the same whatever its run', () => {
    // A 20k × 256-d namespace (71 cells and the unassigned one) gets runs of 512, a 1M one 2,048.
    assert.equal(scoreRunFor(20_000 + headroom(20_000), 72), 512);
    assert.equal(scoreRunFor(1_000_000 + headroom(1_000_000), 501), 2048);
    assert.equal(scoreRunFor(100, 72), 256);
    // The store of a 20k × 256-d namespace: 8.25 MB with runs of 2,048 for every store.
    assert.ok(codeBytesFor(20_000 + headroom(20_000), 256, 72) < 6.7e6);
    const built = (capacity: number, cellSlots: number) => {
      const writer = CodesWriter.create(DIMENSIONS, capacity, cellSlots, [1], 0)!;
      for (const i of vectors.map((_, i) => i).sort((a, b) => cellOf(a) - cellOf(b) || a - b)) writer.add({ rowid: 1000 + i, cell: cellOf(i), vector: vectors[i] });
      return CodesReader.attach(writer.publish(vectors.length))!;
    };
    const short = built(vectors.length, 16); // runs of 256: each 500-code cell takes two calls
    const long = built(10 * vectors.length, 8); // runs of 2,048: one call a cell
    for (let q = 0; q < 12; q++) {
      for (const n of [1, 40, 300, 1200]) {
        const probed = [10 + (q % 6), 10 + ((q + 2) % 6)];
        const [a, b] = [short.nearest(vectors[q * 71], probed, n)!, long.nearest(vectors[q * 71], probed, n)!];
        assert.deepEqual(a.rowids, b.rowids, `query ${q}, n ${n}`);
        assert.equal(a.lastSimilarity(), b.lastSimilarity());
      }
    }
  });

  test("the last scratch slot holds a whole run's records: a scan through it leaves the store intact", () => {
    // One cell of 3,000 codes, runs of 256: the first call finds all 256 above −∞ (a full slot of records).
    const writer = CodesWriter.create(DIMENSIONS, vectors.length, 16, [1], 0)!;
    vectors.forEach((vector, i) => writer.add({ rowid: 1000 + i, cell: 10, vector }));
    const handle = writer.publish(vectors.length);
    const reader = CodesReader.attach(handle)!;
    const before = reader.nearest(vectors[3], [10], vectors.length)!.rowids;
    // Every slot but the last taken (the locks follow the header's 16 fields), so the scan writes the last one.
    const locks = new Int32Array(handle.memory.buffer, 16 * 4, 64);
    locks.fill(1, 0, 63);
    try {
      assert.deepEqual(reader.nearest(vectors[3], [10], vectors.length)!.rowids, before);
      assert.equal(locks[63], 0, 'the last slot was taken and given back');
      locks[63] = 1;
      assert.equal(reader.nearest(vectors[3], [10], 5), null, 'no slot free: null (the recall scans vec0)');
    } finally {
      locks.fill(0);
    }
    assert.deepEqual(reader.nearest(vectors[3], [10], vectors.length)!.rowids, before, 'rowids, scales and codes untouched');
  });

  test('a store that is full says so; appends past its capacity are refused, not lost silently', () => {
    const writer = CodesWriter.create(DIMENSIONS, 2, 2, [1], 0)!;
    assert.ok(writer.add({ rowid: 1, cell: 1, vector: vectors[0] }));
    assert.ok(writer.add({ rowid: 2, cell: 1, vector: vectors[1] }));
    assert.equal(writer.add({ rowid: 3, cell: 1, vector: vectors[2] }), false);
    assert.equal(CodesReader.attach(writer.publish(2))!.size, 2);
  });

  test('vectors of another dimension, and queries of another dimension, are ignored', () => {
    const writer = CodesWriter.create(DIMENSIONS, 4, 2, [1], 0)!;
    writer.add({ rowid: 1, cell: 1, vector: unit([1, 2, 3]) });
    assert.equal(writer.size, 0);
    writer.add({ rowid: 2, cell: 1, vector: vectors[0] });
    const reader = CodesReader.attach(writer.publish(1))!;
    assert.deepEqual(reader.nearest(unit([1, 2, 3]), [1], 5)!.rowids, []);
    assert.deepEqual(reader.nearest(vectors[0], [1], 5)!.rowids, [2]);
  });

  test('one copy: another thread scans the same memory (not a copy) and finds what this one finds, appends included', async () => {
    const handle = store();
    const query = vectors[5];
    const probed = [10, 11, 14];
    const module = new URL('../src/workers/ivf/vector-codes.js', import.meta.url).href;
    const worker = new Worker(`
      const { parentPort, workerData } = require('node:worker_threads');
      import(workerData.module).then(({ CodesReader, CodesWriter }) => {
        parentPort.on('message', ({ handle, query, probed, append }) => {
          if (append) {
            const writer = CodesWriter.resume(handle);
            writer.add(append);
            writer.publish(append.live);
            parentPort.postMessage(null);
          } else {
            parentPort.postMessage(CodesReader.attach(handle).nearest(query, probed, 30).rowids);
          }
        });
      });`, { eval: true, workerData: { module } });
    const ask = (message: object) => new Promise<unknown>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.postMessage(message);
    });
    try {
      const here = CodesReader.attach(handle)!;
      assert.deepEqual(await ask({ handle, query, probed }), here.nearest(query, probed, 30)!.rowids);
      // The other thread appends a vector to the shared store: this thread sees it at once.
      const twin = Float32Array.from(query);
      assert.equal(here.size, vectors.length);
      // The store was built full: a bigger one to append into.
      const roomy = CodesWriter.create(DIMENSIONS, 10, 8, [1], 0)!;
      roomy.add({ rowid: 1, cell: 10, vector: vectors[0] });
      const shared = roomy.publish(1);
      const reader = CodesReader.attach(shared)!;
      assert.equal(reader.size, 1);
      await ask({ handle: shared, append: { rowid: 77, cell: 10, vector: twin, live: 2 } });
      assert.equal(reader.size, 2, 'the append made in the other thread is visible here');
      assert.equal(reader.nearest(query, [10], 1)!.rowids[0], 77);
    } finally {
      await worker.terminate();
    }
  });
});

describe('shared codes over a SQLite file: built in the background, handed to recalls', () => {
  const DIMENSIONS = 32;
  const PER_NAMESPACE = 1200;
  const PROBES = 2;
  const dir = tempDir('memrt-codes-');
  const path = join(dir, 'codes.db');
  const embedder = new HashingEmbedder(DIMENSIONS);
  let writer: Db;
  let reader: Db;
  /** The background lane's own connection: the builder never reads through a recall's. */
  let background: Db;
  const ns: Record<'a' | 'b', number> = { a: 0, b: 0 };
  const texts: string[] = [];
  const rowidsOf: Record<'a' | 'b', number[]> = { a: [], b: [] };
  let registry: VectorCodesRegistry;
  let clock = Date.now();
  const ports: Record<'a' | 'b', SqliteReadPort> = {} as Record<'a' | 'b', SqliteReadPort>;
  const engines: Record<'a' | 'b', RecallEngine> = {} as Record<'a' | 'b', RecallEngine>;
  const refreshes: string[] = [];

  const vectorOf = async (text: string) => (await embedder.embed([text]))[0];
  /** A recall as the pool runs one: handed the registry's store first (never waiting for a build). */
  const recall = async (namespace: 'a' | 'b', text: string, limit = 5) => {
    return recallThrough(registry, namespace, text, limit);
  };
  /** A recall as ReadPool and the worker run one: the store lent for the task, a build asked for when the recall found none. */
  const recallThrough = async (through: VectorCodesRegistry, namespace: 'a' | 'b', text: string, limit = 5) => {
    const loan = through.lend(`tenant-${namespace}`);
    const vectorCodes: RecallCodes = { handle: loan?.handle ?? null };
    const timings: Record<string, number> = {};
    try {
      const hits = await engines[namespace].recall({ query: text, entity: null, types: null, limit, queryVector: await vectorOf(text), vectorCodes }, Date.now(), timings);
      return { rowids: hits.map((hit) => hit.row.rowid), coded: timings.vector_codes !== undefined };
    } finally {
      if (vectorCodes.wanted) through.wanted(`tenant-${namespace}`);
      loan?.giveBack();
    }
  };
  const recallIn = async (namespace: 'a' | 'b', text: string, limit = 5) => (await recall(namespace, text, limit)).rowids;
  const newestCells = (namespaceId: number) => writer.prepare(`SELECT c.cell, c.centroid FROM vector_cells c JOIN vector_generations g ON g.generation = c.generation
    WHERE g.namespace_id = ? AND g.generation = (SELECT max(generation) FROM vector_generations WHERE namespace_id = ?) ORDER BY c.cell`)
    .all(namespaceId, namespaceId) as { cell: number; centroid: Buffer }[];
  const cellFor = async (namespaceId: number, text: string) => {
    const cells = newestCells(namespaceId);
    const centroids = { count: cells.length, dimensions: DIMENSIONS, data: Float32Array.from(cells.flatMap((c) => [...new Float32Array(c.centroid.buffer.slice(c.centroid.byteOffset, c.centroid.byteOffset + c.centroid.byteLength))])) };
    return cells[nearestCentroid(centroids, await vectorOf(text))].cell;
  };
  const embed = async (rowid: number, namespaceId: number, text: string) => {
    const cell = await cellFor(namespaceId, text);
    writer.prepare(INSERT_VECTOR_SQL).run(BigInt(rowid), BigInt(namespaceId), BigInt(cell), blobOf(await vectorOf(text)));
    writer.prepare('UPDATE memories SET embedded = 1, vector_cell = ?, vector_seq = ? WHERE rowid = ?').run(cell, nextVectorSeq(), rowid);
  };
  const unembed = (rowid: number, content?: string) => {
    if (content) writer.prepare('UPDATE memories SET content = ? WHERE rowid = ?').run(content, rowid);
    writer.prepare('UPDATE memories SET embedded = 0, vector_cell = 0 WHERE rowid = ?').run(rowid);
    writer.prepare('DELETE FROM memory_vectors WHERE rowid = ?').run(BigInt(rowid));
  };
  const heldBy = (namespace: 'a' | 'b') => registry.peek(`tenant-${namespace}`);

  /** Trains and installs a generation for the namespace with the writer's own commands, and moves every vector into it. */
  function index(namespace: 'a' | 'b', retire = true): void {
    const id = ns[namespace];
    const commands = new SqliteCommands(writer, { episodeTtlMs: 0 }, id);
    const rowids = writer.prepare('SELECT rowid FROM memories WHERE namespace_id = ? AND embedded = 1').pluck().all(id) as number[];
    const stored = (rowid: number) => {
      const blob = writer.prepare('SELECT embedding FROM memory_vectors WHERE rowid = ?').pluck().get(BigInt(rowid)) as Buffer;
      return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
    };
    const { trainedOn, centroids } = trainIndex(rowids, stored);
    commands.run({ type: 'installVectorGeneration', trainedOn, centroids });
    const cells = newestCells(id).map((row) => row.cell);
    commands.run({ type: 'moveVectors', moves: rowids.map((rowid) => ({ rowid, cell: cells[nearestCentroid(centroids, stored(rowid))] })) });
    if (retire) commands.run({ type: 'retireVectorGenerations' });
  }

  before(async () => {
    writer = openDatabase(path, { readonly: false, synchronous: 'NORMAL' });
    migrate(writer);
    prepareVectorTable(writer, { id: `hash-${DIMENSIONS}`, dimensions: DIMENSIONS }, false);
    ns.a = ensureNamespace(writer, 'tenant-a');
    ns.b = ensureNamespace(writer, 'tenant-b');
    const corpus = new Corpus(5, 60);
    for (let i = 0; i < PER_NAMESPACE; i++) texts.push(`${corpus.fact(corpus.entity())} #${i}`);
    const vectors = await embedder.embed(texts);
    const insertVector = writer.prepare(INSERT_VECTOR_SQL);
    for (const namespace of ['a', 'b'] as const) {
      const insert = memoryInserter(writer, ns[namespace]);
      writer.transaction(() => {
        // The same texts, so the same vectors, in both namespaces.
        texts.forEach((content, i) => {
          const rowid = insert({ id: `${namespace}${i}`, content, embedded: 1 });
          insertVector.run(BigInt(rowid), BigInt(ns[namespace]), 0n, blobOf(vectors[i]));
          rowidsOf[namespace].push(rowid);
        });
      })();
      index(namespace);
    }
    reader = openDatabase(path, { readonly: true });
    background = openDatabase(path, { readonly: true });
    registry = new VectorCodesRegistry(async (namespace, previous, limitBytes) => {
      refreshes.push(namespace);
      const id = namespace === 'tenant-a' ? ns.a : ns.b;
      return refreshVectorCodes(background, id, new VectorCells(background, id), previous, limitBytes, 0);
    }, 64 * 2 ** 20, createLogger('silent'), () => clock);
    // Two cells probed of ~17: a neighbour in another cell is never seen.
    for (const namespace of ['a', 'b'] as const) {
      ports[namespace] = new SqliteReadPort(reader, ns[namespace], `tenant-${namespace}`, { minSimilarity: 0.2, vectorProbes: PROBES, vectorCodes: true });
      engines[namespace] = new RecallEngine(ports[namespace], { only: ['vector'] });
    }
  });
  after(() => {
    reader.close();
    background.close();
    writer.close();
  });

  test('a recall never builds: without a store it scans vec0 at once, and asks for one in the background', async () => {
    const first = await recall('a', texts[0]);
    assert.equal(first.rowids[0], rowidsOf.a[0]);
    assert.equal(first.coded, false, 'the first recall scanned vec0');
    await registry.settled();
    assert.deepEqual(refreshes, ['tenant-a'], 'one build asked for, by the recall that found none');
    await recall('a', texts[1]);
    await registry.refresh('tenant-b');
    const second = await recall('a', texts[0]);
    assert.equal(second.coded, true, 'the store is used once it is there');
    assert.equal(registry.builds, 2);
  });

  test('every memory is found by its own vector through the codes, and only in its own namespace', async () => {
    for (let i = 0; i < PER_NAMESPACE; i += 7) {
      const { rowids: [first, ...rest], coded } = await recall('a', texts[i]);
      assert.ok(coded);
      assert.equal(first, rowidsOf.a[i], `memory ${i} not first by its own vector`);
      for (const rowid of rest) assert.ok(rowidsOf.a.includes(rowid), 'tenant-b memory in a tenant-a recall');
      const inB = await recallIn('b', texts[i]);
      assert.equal(inB[0], rowidsOf.b[i]);
      for (const rowid of inB) assert.ok(rowidsOf.b.includes(rowid), 'tenant-a memory in a tenant-b recall');
    }
    const cells = newestCells(ns.a).length;
    assert.ok(PROBES < cells / 4, `${cells} cells: the cell restriction went untested`);
    // One store per namespace for the whole service, within its budget.
    assert.equal(registry.namespaces, 2);
    const oneNamespace = PER_NAMESPACE * (32 + 4 + 16);
    assert.ok(registry.bytes >= 2 * oneNamespace && registry.bytes <= registry.limitBytes, `codes hold ${registry.bytes} bytes`);
  });

  test('a memory embedded after the store was built is found before any refresh; after one, from the store', async () => {
    const text = 'Quentin restores a harpsichord in the lighthouse every winter';
    const insert = memoryInserter(writer, ns.a);
    const handle = heldBy('a')!;
    const seqBefore = handle.seq; // the refresh task here runs in this thread, on the same object
    // Stored and not embedded yet (the backfill's backlog), then embedded in its cell.
    const rowid = insert({ id: 'late', content: text, embedded: 0 });
    assert.ok(!(await recallIn('a', text)).includes(rowid));
    await embed(rowid, ns.a, text);
    const fresh = await recall('a', text);
    assert.equal(fresh.rowids[0], rowid, 'the new memory is not found');
    assert.ok(fresh.coded, 'found beside the store, from the file');
    assert.ok(!(await recallIn('b', text)).includes(rowid), 'tenant-a memory in a tenant-b recall');
    await registry.refresh('tenant-a');
    const after = heldBy('a')!;
    assert.equal(after.id, handle.id, 'appended to the same store');
    assert.ok(after.seq > seqBefore, 'the watermark passed it');
    assert.equal((await recallIn('a', text))[0], rowid);
  });

  test('(d) a row stuck without a vector holds nothing back: the watermark passes it, and it is found once it has one', async () => {
    const insert = memoryInserter(writer, ns.a);
    const stuckText = 'Ysolde keeps a ledger of every comet seen from the observatory';
    const stuck = insert({ id: 'stuck', content: stuckText, embedded: 0 });
    const laterText = 'Bartholomew grows saffron on the roof of the old mill';
    const later = insert({ id: 'after-stuck', content: laterText, embedded: 0 });
    await embed(later, ns.a, laterText);
    const before = heldBy('a')!.seq;
    await registry.refresh('tenant-a');
    const seqOf = (rowid: number) => writer.prepare('SELECT vector_seq FROM memories WHERE rowid = ?').pluck().get(rowid) as number;
    // Before: the watermark (a rowid) stayed below the stuck row, and every refresh and recall read all rows after it.
    assert.ok(heldBy('a')!.seq >= seqOf(later) && heldBy('a')!.seq > before, 'the watermark moved past the row embedded after the stuck one');
    const fresh = writer.prepare('SELECT count(*) FROM memories WHERE namespace_id = ? AND embedded = 1 AND vector_seq > ?').pluck().get(ns.a, heldBy('a')!.seq);
    assert.equal(fresh, 0, 'nothing left for recalls to read beside the store');
    assert.equal((await recallIn('a', laterText))[0], later);
    await embed(stuck, ns.a, stuckText);
    const found = await recall('a', stuckText);
    assert.equal(found.rowids[0], stuck, 'found from the file before a refresh');
    assert.ok(found.coded);
    await registry.refresh('tenant-a');
    assert.ok(heldBy('a')!.seq >= seqOf(stuck), 'held once embedded');
    assert.equal((await recallIn('a', stuckText))[0], stuck);
  });

  test('a row embedded while a refresh reads is either in the store or above its watermark (one snapshot)', async () => {
    const insert = memoryInserter(writer, ns.a);
    const text = 'Zebulon paints lighthouses on porcelain thimbles at midnight';
    const rowid = insert({ id: 'racy', content: text, embedded: 0 });
    const cell = await cellFor(ns.a, text);
    const vec = blobOf(await vectorOf(text));
    // The writer attaches the vector while the refresh is between its reads (before it reads what was attached since).
    const racy = new Proxy(background, { get(target, key) {
      if (key === 'prepare') return (sql: string) => {
        const statement = target.prepare(sql);
        if (!sql.includes('m.vector_seq > ?')) return statement;
        return new Proxy(statement, { get(t, k) {
          if (k === 'iterate') return (...args: unknown[]) => {
            writer.prepare(INSERT_VECTOR_SQL).run(BigInt(rowid), BigInt(ns.a), BigInt(cell), vec);
            writer.prepare('UPDATE memories SET embedded = 1, vector_cell = ?, vector_seq = ? WHERE rowid = ?').run(cell, nextVectorSeq(), rowid);
            return (t.iterate as (...x: unknown[]) => unknown).apply(t, args);
          };
          const v = Reflect.get(t, k); return typeof v === 'function' ? v.bind(t) : v;
        } });
      };
      const v = Reflect.get(target, key); return typeof v === 'function' ? v.bind(target) : v;
    } }) as Db;
    const result = refreshVectorCodes(racy, ns.a, new VectorCells(background, ns.a), heldBy('a')!, 64 * 2 ** 20, 0);
    const cellsAll = writer.prepare('SELECT cell FROM vector_cells').pluck().all() as number[];
    const inStore = CodesReader.attach(result.handle!)!.nearest(await vectorOf(text), cellsAll, 100000)!.rowids.includes(rowid);
    const seq = writer.prepare('SELECT vector_seq FROM memories WHERE rowid = ?').pluck().get(rowid) as number;
    assert.ok(inStore || seq > result.handle!.seq, 'row neither in the store nor above the watermark');
  });

  test('(e) a re-embedding is found by its new vector, however it falls between refreshes, without a full build', async () => {
    // Seen waiting by a refresh: the new vector is appended once it is there.
    const seen = rowidsOf.a[10];
    const seenText = 'Ottoline charts the migration of arctic terns over Svalbard';
    unembed(seen, seenText);
    await registry.refresh('tenant-a');
    await embed(seen, ns.a, seenText);
    await registry.refresh('tenant-a');
    assert.equal((await recallIn('a', seenText))[0], seen);
    // Cleared and embedded again between two refreshes, with no write after: before, only a full
    // build (10 minutes after the last, and only if the namespace was written again) took it in.
    const missed = rowidsOf.a[11];
    const missedText = 'Perpetua tunes church organs along the Danube each spring';
    unembed(missed, missedText);
    await embed(missed, ns.a, missedText);
    const beforeRefresh = await recall('a', missedText);
    assert.ok(beforeRefresh.coded);
    assert.equal(beforeRefresh.rowids[0], missed, 'found from the file before a refresh');
    const before = heldBy('a')!.id;
    await registry.refresh('tenant-a');
    assert.equal(heldBy('a')!.id, before, 'appended, no full build');
    const { rowids, coded } = await recall('a', missedText);
    assert.ok(coded);
    assert.equal(rowids[0], missed, 'found through the store');
  });

  test('(b) deletions: a deleted memory is never returned, and past a tenth of the store it is built again without them', async () => {
    const doomed = rowidsOf.a[3];
    writer.prepare('DELETE FROM memory_vectors WHERE rowid = ?').run(BigInt(doomed));
    writer.prepare('DELETE FROM memories WHERE rowid = ?').run(doomed);
    assert.ok(!(await recallIn('a', texts[3])).includes(doomed), 'a deleted memory came back');
    assert.equal((await recallIn('b', texts[3]))[0], rowidsOf.b[3], "tenant-b's copy stays");
    await registry.refresh('tenant-a');
    const keptStore = heldBy('a')!;
    const kept = keptStore.id;
    // Delete a fifth: the next refresh builds a store of the live vectors only.
    const gone = rowidsOf.a.filter((_, i) => i % 5 === 1);
    writer.transaction(() => {
      for (const rowid of gone) {
        writer.prepare('DELETE FROM memory_vectors WHERE rowid = ?').run(BigInt(rowid));
        writer.prepare('DELETE FROM memories WHERE rowid = ?').run(rowid);
      }
    })();
    await registry.refresh('tenant-a');
    const rebuilt = heldBy('a')!;
    assert.notEqual(rebuilt.id, kept, 'built again');
    assert.ok(CodesReader.attach(keptStore)!.retired, 'the replaced store is marked retired: threads holding it let it go');
    assert.ok(!CodesReader.attach(rebuilt)!.retired);
    const live = writer.prepare('SELECT count(*) FROM memories WHERE namespace_id = ? AND embedded = 1').pluck().get(ns.a) as number;
    assert.equal(CodesReader.attach(rebuilt)!.size, live, 'the store holds the live vectors only');
    for (let i = 1; i < 200; i += 25) assert.ok(!(await recallIn('a', texts[i])).includes(rowidsOf.a[i]), `deleted memory ${i} came back`);
    for (let i = 2; i < 200; i += 25) assert.equal((await recallIn('a', texts[i]))[0], rowidsOf.a[i]);
  });

  test('a new generation: the store stays valid while it is probed, and is built in the new cells before the old retires', async () => {
    const old = heldBy('a')!;
    index('a', false);
    // Both generations installed: the old store's cells are still probed.
    const during = await recall('a', texts[102]);
    assert.ok(during.coded);
    assert.equal(during.rowids[0], rowidsOf.a[102]);
    // The indexer's order: refresh (a full build, all vectors moved) then retire.
    clock += 1;
    await registry.refresh('tenant-a');
    const built = heldBy('a')!;
    new SqliteCommands(writer, { episodeTtlMs: 0 }, ns.a).run({ type: 'retireVectorGenerations' });
    assert.deepEqual(built.generations.length, 1);
    assert.notDeepEqual(built.generations, old.generations, 'filed under the new generation');
    for (let i = 102; i < 200; i += 10) {
      const { rowids, coded } = await recall('a', texts[i]);
      assert.ok(coded, 'still valid after the old generation retired');
      assert.equal(rowids[0], rowidsOf.a[i], `memory ${i} after retraining`);
    }
    // A store of a retired generation is never scanned: vec0 answers until the next build.
    index('a');
    const stale = await recall('a', texts[102]);
    assert.equal(stale.coded, false);
    assert.equal(stale.rowids[0], rowidsOf.a[102]);
  });

  /** A registry over the same file with its own budget and clock (its own stores). */
  const registryOf = (limitBytes: number, now: () => number) => new VectorCodesRegistry(async (namespace, previous, limit) => {
    const id = namespace === 'tenant-a' ? ns.a : ns.b;
    return refreshVectorCodes(background, id, new VectorCells(background, id), previous, limit, 0);
  }, limitBytes, createLogger('silent'), now);
  const storeBytes = (id: number) => refreshVectorCodes(background, id, new VectorCells(background, id), null, 2 ** 30, 0).bytes;

  test('stores that do not fit the budget: recall scans vec0 and finds the same', async () => {
    const tiny = registryOf(1024, () => clock);
    await tiny.refresh('tenant-a');
    assert.equal(tiny.bytes, 0);
    assert.equal(tiny.tooLargeNamespaces, 1, 'reported: its store alone is larger than the budget');
    const roomy = registryOf(storeBytes(ns.a), () => clock);
    await roomy.refresh('tenant-a');
    assert.equal([roomy.namespaces, roomy.tooLargeNamespaces].join(), '1,0', 'a budget it fits: built, not reported');
    for (let i = 22; i < 120; i += 10) {
      const { rowids, coded } = await recallThrough(tiny, 'a', texts[i]);
      assert.equal(coded, false);
      assert.equal(rowids[0], rowidsOf.a[i]);
    }
  });

  test('(a) the upkeep never drops a recalled store; a recall drops only stores not recalled for a while: no thrashing', async () => {
    let now = clock;
    const one = Math.max(storeBytes(ns.a), storeBytes(ns.b));
    const tight = registryOf(Math.floor(one * 1.5), () => now);
    await tight.refresh('tenant-a');
    assert.ok(tight.peek('tenant-a'));
    assert.equal((await recallThrough(tight, 'a', texts[5])).coded, true);
    // The upkeep of b (written, never recalled): before, its build pushed a's store out.
    await tight.refresh('tenant-b');
    assert.ok(tight.peek('tenant-a'), "the upkeep of another namespace dropped a's store");
    assert.equal(tight.peek('tenant-b'), null, 'no room for b without dropping a');
    // Recalls of both, in turn: b's finds no store and asks; a was recalled just now, so it stays.
    for (let round = 0; round < 3; round++) {
      now += RECALL_RETRY_MS;
      assert.equal((await recallThrough(tight, 'b', texts[7])).coded, false);
      await tight.settled();
      assert.equal((await recallThrough(tight, 'a', texts[7])).coded, true, `round ${round}: a's store was dropped for b's`);
    }
    const builds = tight.builds;
    assert.equal(builds, 1, 'nothing built again');
    // a not recalled for KEEP_RECALLED_MS: a recall of b may take its room.
    now += KEEP_RECALLED_MS + 1;
    await recallThrough(tight, 'b', texts[7]);
    await tight.settled();
    assert.ok(tight.peek('tenant-b'));
    assert.equal(tight.peek('tenant-a'), null, 'a, idle, made room');
    assert.equal((await recallThrough(tight, 'b', texts[7])).coded, true);
    assert.ok(tight.peakBytes <= tight.limitBytes);
  });

  test('(b) the budget holds a store being replaced while a recall still has it: never more than SERVICE_VECTOR_CODES_MB at once', async () => {
    let now = clock;
    // Room for b's store and a little: a rebuild does not fit beside the old one.
    const limit = Math.floor(storeBytes(ns.b) * 1.3);
    const budget = registryOf(limit, () => now);
    await budget.refresh('tenant-b');
    const old = budget.peek('tenant-b')!;
    const oldBytes = budget.bytes;
    // A recall in flight holds the store; meanwhile a fifth of b is deleted, so the next refresh rebuilds.
    const loan = budget.lend('tenant-b')!;
    const gone = rowidsOf.b.filter((_, i) => i % 5 === 2);
    writer.transaction(() => {
      for (const rowid of gone) {
        writer.prepare('DELETE FROM memory_vectors WHERE rowid = ?').run(BigInt(rowid));
        writer.prepare('DELETE FROM memories WHERE rowid = ?').run(rowid);
      }
    })();
    await budget.refresh('tenant-b');
    const now1 = budget.peek('tenant-b');
    // Before: the new store was built beside the lent old one (both alive, over the budget) and the old was not counted.
    const alive = (now1 && now1.id !== old.id ? budget.bytes : 0) + oldBytes;
    assert.ok(budget.bytes >= oldBytes, 'the lent store is still counted');
    assert.ok(alive <= limit || now1 === null, `stores alive ${alive} > budget ${limit}`);
    assert.equal(now1, null, 'dropped: its rebuild waits for room');
    assert.equal((await recallThrough(budget, 'b', texts[3])).coded, false, 'recall scans vec0 meanwhile');
    loan.giveBack();
    assert.equal(budget.bytes, 0, 'released once the recall gave it back');
    now += RECALL_RETRY_MS;
    await recallThrough(budget, 'b', texts[3]);
    await budget.settled();
    assert.ok(budget.peek('tenant-b'), 'built again once there was room');
    assert.ok(budget.peakBytes <= limit);
    for (let i = 3; i < 200; i += 25) assert.equal((await recallThrough(budget, 'b', texts[i])).rowids[0], rowidsOf.b[i]);
  });

  test('(f) a recall that falls back to vec0 (too many vectors attached since the store) records no vector_codes time, and finds the same', async () => {
    await registry.refresh('tenant-b');
    assert.ok(heldBy('b'));
    const insert = memoryInserter(writer, ns.b);
    const insertVector = writer.prepare(INSERT_VECTOR_SQL);
    const cell = await cellFor(ns.b, texts[4]);
    const vector = blobOf(await vectorOf('unrelated filler about nothing in particular'));
    writer.transaction(() => {
      for (let i = 0; i < 4100; i++) {
        const rowid = insert({ id: `burst${i}`, content: `burst ${i}`, embedded: 0 });
        insertVector.run(BigInt(rowid), BigInt(ns.b), BigInt(cell), vector);
        writer.prepare('UPDATE memories SET embedded = 1, vector_cell = ?, vector_seq = ? WHERE rowid = ?').run(cell, nextVectorSeq(), rowid);
      }
    })();
    const { rowids, coded } = await recall('b', texts[4]);
    assert.equal(coded, false, 'vec0 answered: no vector_codes stage');
    assert.equal(rowids[0], rowidsOf.b[4]);
    await registry.refresh('tenant-b');
    const after = await recall('b', texts[4]);
    assert.equal(after.coded, true, 'the codes answer again once the store has them');
    assert.equal(after.rowids[0], rowidsOf.b[4]);
  });

  test('a vector attached by the writer itself (attachVectors) is found through the codes once a refresh appended it', async () => {
    await registry.refresh('tenant-a');
    const text = 'Cornelius restores carousel horses in a barn near Ghent';
    const rowid = memoryInserter(writer, ns.a)({ id: 'by-writer', content: text, embedded: 0 });
    const commands = new SqliteCommands(writer, { episodeTtlMs: 0 }, ns.a);
    commands.run({ type: 'attachVectors', items: [{ rowid, cell: await cellFor(ns.a, text), vector: await vectorOf(text), mentionedEntityIds: [] }] } as never);
    assert.notEqual(writer.prepare('SELECT vector_seq FROM memories WHERE rowid = ?').pluck().get(rowid), null, 'the writer did not stamp the vector');
    const before = heldBy('a')!.id;
    await registry.refresh('tenant-a');
    assert.equal(heldBy('a')!.id, before, 'appended');
    const { rowids, coded } = await recall('a', text);
    assert.ok(coded);
    assert.equal(rowids[0], rowid);
  });

  test('a file stamped ahead of this clock (clock stepped back, writer restarted): a memory embedded now is still found', async () => {
    await registry.refresh('tenant-a');
    const insert = memoryInserter(writer, ns.a);
    // A memory embedded by the previous writer, whose clock ran an hour ahead (NTP then stepped it back).
    const aheadText = 'Wilhelmina catalogues fossil ferns in the quarry at dawn';
    const ahead = insert({ id: 'ahead', content: aheadText, embedded: 0 });
    const cell = await cellFor(ns.a, aheadText);
    writer.prepare(INSERT_VECTOR_SQL).run(BigInt(ahead), BigInt(ns.a), BigInt(cell), blobOf(await vectorOf(aheadText)));
    writer.prepare('UPDATE memories SET embedded = 1, vector_cell = ?, vector_seq = ? WHERE rowid = ?').run(cell, (Date.now() + 3_600_000) * 1024, ahead);
    await registry.refresh('tenant-a'); // the watermark passes the stamp from the future
    // A writer opening the file continues above its highest stamp (openSqliteWriteStore does this);
    // from its own clock alone it would stamp now * 1024, below the stamp from the future.
    continueVectorSeq(writer);
    const text = 'Bartholomew ferries beehives across the fjord in midsummer';
    const rowid = insert({ id: 'after-restart', content: text, embedded: 0 });
    await embed(rowid, ns.a, text);
    const found = await recall('a', text);
    assert.ok(found.coded);
    assert.equal(found.rowids[0], rowid, 'a memory embedded after the writer restarted is invisible to the codes');
    await registry.refresh('tenant-a');
    assert.equal((await recallIn('a', text))[0], rowid, 'still invisible after a refresh');
  });
});
