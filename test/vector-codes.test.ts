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
import { Int8Kernel, queryLimit, strideFor } from '../src/workers/ivf/int8-kernel.js';
import { VectorCodes } from '../src/workers/ivf/vector-codes.js';
import { CodeBudget, type BudgetedCodes } from '../src/workers/ivf/code-budget.js';
import { nearestCentroid, trainIndex } from '../src/workers/ivf/kmeans.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { Corpus } from '../bench/lib/corpus.js';
import { memoryInserter, unit } from './support/rows.js';
import { tempDir } from './support/service.js';

/** Deterministic numbers in [0, 1). */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i], 0);

describe('int8 kernel', () => {
  for (const dimensions of [16, 256, 300, 512, 1536]) {
    test(`${dimensions}-d: every dot product equals plain integer arithmetic`, () => {
      const stride = strideFor(dimensions);
      assert.equal(stride % 16, 0);
      assert.ok(stride >= dimensions && stride < dimensions + 16);
      const kernel = Int8Kernel.create(stride, 200);
      assert.ok(kernel, 'WebAssembly SIMD is available in Node 20');
      const next = random(dimensions);
      const limit = queryLimit(stride);
      for (let d = 0; d < dimensions; d++) kernel.query[d] = Math.round((next() - 0.5) * 2 * limit);
      for (let i = 0; i < 200; i++) for (let d = 0; d < dimensions; d++) kernel.codes[i * stride + d] = Math.round((next() - 0.5) * 254);
      // Extremes: the largest magnitudes must not overflow.
      for (let d = 0; d < dimensions; d++) [kernel.query[d], kernel.codes[d]] = [-limit, -127];
      kernel.dots(0, 200);
      for (let i = 0; i < 200; i++) {
        let sum = 0;
        for (let d = 0; d < dimensions; d++) sum += kernel.query[d] * kernel.codes[i * stride + d];
        assert.equal(kernel.scores[i], sum, `vector ${i}`);
      }
      kernel.scores.fill(7);
      kernel.dots(50, 10);
      assert.equal(kernel.scores[49], 7, 'scores before the run untouched');
      assert.equal(kernel.scores[60], 7, 'scores after the run untouched');
    });
  }
});

describe('vector codes', () => {
  const DIMENSIONS = 64;
  const next = random(7);
  const vectors = Array.from({ length: 3000 }, () => unit(Array.from({ length: DIMENSIONS }, () => next() - 0.5)));
  const cellOf = (i: number) => 10 + (i % 6);

  test('the shortlist holds the exact nearest of the probed cells, and nothing from the others', () => {
    // Inserted out of cell order: most go to the tail, then are put in order.
    const codes = VectorCodes.create(DIMENSIONS, 100)!;
    vectors.forEach((vector, i) => codes.add({ rowid: 1000 + i, cell: cellOf(i), vector }));
    assert.equal(codes.size, vectors.length, 'grew past its first capacity');
    for (const ordered of [false, true]) {
      if (ordered) codes.order();
      if (ordered) assert.equal(codes.unordered, 0);
      else assert.ok(codes.unordered > codes.size / 2, 'most vectors wait in the tail');
      for (let q = 0; q < 20; q++) {
        const query = vectors[q * 37];
        const probed = [10, 12, 13];
        const shortlist = codes.nearest(query, probed, 40);
        assert.equal(shortlist.length, 40);
        for (const rowid of shortlist) assert.ok(probed.includes(cellOf(rowid - 1000)), 'a vector of an unprobed cell');
        const exact = vectors.map((v, i) => ({ rowid: 1000 + i, similarity: dot(query, v) }))
          .filter(({ rowid }) => probed.includes(cellOf(rowid - 1000)))
          .sort((a, b) => b.similarity - a.similarity).slice(0, 10).map(({ rowid }) => rowid);
        assert.equal(shortlist[0], exact[0], 'the query itself comes first');
        for (const rowid of exact) assert.ok(shortlist.includes(rowid), `exact neighbour ${rowid} missing from the shortlist`);
      }
    }
  });

  test('vectors of another dimension, and queries of another dimension, are ignored', () => {
    const codes = VectorCodes.create(DIMENSIONS, 4)!;
    codes.add({ rowid: 1, cell: 1, vector: unit([1, 2, 3]) });
    assert.equal(codes.size, 0);
    codes.add({ rowid: 2, cell: 1, vector: vectors[0] });
    assert.deepEqual(codes.nearest(unit([1, 2, 3]), [1], 5), []);
    assert.deepEqual(codes.nearest(vectors[0], [1], 5), [2]);
  });
});

describe('code budget', () => {
  const holder = (bytes: number): BudgetedCodes & { released: boolean } => ({
    bytes, released: false, release() {
      this.released = true;
    },
  });

  test('admits within the limit, drops the least recently used to make room, refuses what cannot fit alone', () => {
    const budget = new CodeBudget(100);
    const [a, b, c] = [holder(40), holder(40), holder(40)];
    assert.ok(budget.admit(a, a.bytes));
    assert.ok(budget.admit(b, b.bytes));
    budget.touch(a);
    assert.ok(budget.admit(c, c.bytes));
    assert.equal(b.released, true, 'b was least recently used');
    assert.equal(a.released, false);
    assert.equal(budget.usedBytes, 80);
    assert.equal(budget.admit(holder(101), 101), false);
    assert.equal(budget.usedBytes, 80, 'a refusal drops nothing');
  });
});

describe('codes over a SQLite file, through the read port', () => {
  const DIMENSIONS = 32;
  const PER_NAMESPACE = 1200;
  const PROBES = 2;
  const dir = tempDir('memrt-codes-');
  const path = join(dir, 'codes.db');
  const embedder = new HashingEmbedder(DIMENSIONS);
  let writer: Db;
  let reader: Db;
  const ns: Record<'a' | 'b', number> = { a: 0, b: 0 };
  const texts: string[] = [];
  const rowidsOf: Record<'a' | 'b', number[]> = { a: [], b: [] };
  let budget: CodeBudget;
  let engineA: RecallEngine;
  let engineB: RecallEngine;
  let commandsA: SqliteCommands;

  const vectorOf = async (text: string) => (await embedder.embed([text]))[0];
  const recallIn = async (engine: RecallEngine, text: string, limit = 5) =>
    (await engine.recall({ query: text, entity: null, types: null, limit, queryVector: await vectorOf(text) })).map((hit) => hit.row.rowid);
  const newestCells = (namespaceId: number) => writer.prepare(`SELECT c.cell, c.centroid FROM vector_cells c JOIN vector_generations g ON g.generation = c.generation
    WHERE g.namespace_id = ? AND g.generation = (SELECT max(generation) FROM vector_generations WHERE namespace_id = ?) ORDER BY c.cell`)
    .all(namespaceId, namespaceId) as { cell: number; centroid: Buffer }[];

  /** Trains and installs a generation for the namespace with the writer's own commands, and moves every vector into it. */
  function index(namespace: 'a' | 'b'): void {
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
    commands.run({ type: 'retireVectorGenerations' });
    if (namespace === 'a') commandsA = commands;
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
    budget = new CodeBudget(64 * 2 ** 20);
    // Two cells probed of ~17: a neighbour in another cell is never seen.
    const port = (namespace: 'a' | 'b') => new SqliteReadPort(reader, ns[namespace], `tenant-${namespace}`, { minSimilarity: 0.2, vectorProbes: PROBES, codeBudget: budget });
    engineA = new RecallEngine(port('a'), { only: ['vector'] });
    engineB = new RecallEngine(port('b'), { only: ['vector'] });
  });
  after(() => {
    reader.close();
    writer.close();
  });

  test('every memory is found by its own vector through the codes, and only in its own namespace', async () => {
    for (let i = 0; i < PER_NAMESPACE; i += 7) {
      const [first, ...rest] = await recallIn(engineA, texts[i]);
      assert.equal(first, rowidsOf.a[i], `memory ${i} not first by its own vector`);
      for (const rowid of rest) assert.ok(rowidsOf.a.includes(rowid), 'tenant-b memory in a tenant-a recall');
      const inB = await recallIn(engineB, texts[i]);
      assert.equal(inB[0], rowidsOf.b[i]);
      for (const rowid of inB) assert.ok(rowidsOf.b.includes(rowid), 'tenant-a memory in a tenant-b recall');
    }
    const cells = newestCells(ns.a).length;
    assert.ok(PROBES < cells / 4, `${cells} cells: the cell restriction went untested`);
    // Both namespaces' codes are held, each its own, within the thread's budget.
    const oneNamespace = PER_NAMESPACE * (32 + 4 + 16);
    assert.ok(budget.usedBytes >= 2 * oneNamespace && budget.usedBytes <= budget.limitBytes, `codes hold ${budget.usedBytes} bytes`);
  });

  test('a memory stored after the codes were loaded is found; a deleted one is not', async () => {
    const text = 'Quentin restores a harpsichord in the lighthouse every winter';
    const insert = memoryInserter(writer, ns.a);
    const cells = newestCells(ns.a);
    const vector = await vectorOf(text);
    const centroids = { count: cells.length, dimensions: DIMENSIONS, data: Float32Array.from(cells.flatMap((c) => [...new Float32Array(c.centroid.buffer.slice(c.centroid.byteOffset, c.centroid.byteOffset + c.centroid.byteLength))])) };
    const cell = cells[nearestCentroid(centroids, vector)].cell;
    // Stored and not embedded yet (the backfill's backlog), then embedded in its cell.
    const rowid = insert({ id: 'late', content: text, embedded: 0 });
    assert.ok(!(await recallIn(engineA, text)).includes(rowid));
    writer.prepare(INSERT_VECTOR_SQL).run(BigInt(rowid), BigInt(ns.a), BigInt(cell), blobOf(vector));
    writer.prepare('UPDATE memories SET embedded = 1, vector_cell = ? WHERE rowid = ?').run(cell, rowid);
    assert.equal((await recallIn(engineA, text))[0], rowid, 'the new memory is not found');
    assert.ok(!(await recallIn(engineB, text)).includes(rowid), 'tenant-a memory in a tenant-b recall');

    const doomed = rowidsOf.a[3];
    writer.prepare('DELETE FROM memory_vectors WHERE rowid = ?').run(BigInt(doomed));
    writer.prepare('DELETE FROM memories WHERE rowid = ?').run(doomed);
    assert.ok(!(await recallIn(engineA, texts[3])).includes(doomed), 'a deleted memory came back');
    assert.equal((await recallIn(engineB, texts[3]))[0], rowidsOf.b[3], "tenant-b's copy stays");
  });

  test('a memory whose content changed is found by its new vector', async () => {
    const rowid = rowidsOf.a[10];
    const text = 'Ottoline charts the migration of arctic terns over Svalbard';
    writer.prepare('UPDATE memories SET embedded = 0, content = ? WHERE rowid = ?').run(text, rowid);
    writer.prepare('DELETE FROM memory_vectors WHERE rowid = ?').run(BigInt(rowid));
    await recallIn(engineA, text); // the codes see it waiting for its vector
    writer.prepare(INSERT_VECTOR_SQL).run(BigInt(rowid), BigInt(ns.a), 0n, blobOf(await vectorOf(text)));
    writer.prepare('UPDATE memories SET embedded = 1, vector_cell = 0 WHERE rowid = ?').run(rowid);
    assert.equal((await recallIn(engineA, text))[0], rowid);
  });

  test('a new generation: the codes are loaded again in its cells', async () => {
    const before = budget.usedBytes;
    index('a');
    for (let i = 100; i < 200; i += 9) assert.equal((await recallIn(engineA, texts[i]))[0], rowidsOf.a[i], `memory ${i} after retraining`);
    assert.ok(commandsA);
    assert.ok(budget.usedBytes > 0 && budget.usedBytes <= before * 1.5);
  });

  test('codes that do not fit the budget: recall scans vec0 and finds the same', async () => {
    const tiny = new CodeBudget(1024);
    const engine = new RecallEngine(new SqliteReadPort(reader, ns.a, 'tenant-a', { minSimilarity: 0.2, codeBudget: tiny }), { only: ['vector'] });
    for (let i = 20; i < 120; i += 11) assert.equal((await recallIn(engine, texts[i]))[0], rowidsOf.a[i]);
    assert.equal(tiny.usedBytes, 0);
  });
});
