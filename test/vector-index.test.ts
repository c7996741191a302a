// The IVF vector index: its maths (k-means, nearest cells), the writer's guards (only the
// newest generation's cells accept vectors, a generation retires only when empty), the
// upgrade of a pre-IVF vector table, and the whole loop in a real service: training once a
// namespace is big enough, vectors placed at attach time, retraining after growth, and
// recall that still finds every memory by its own vector through the probed cells.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { blobOf } from '../src/shared/meta.js';
import { INSERT_VECTOR_SQL } from '../src/shared/sql-schema.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { prepareVectorTable } from '../src/writer/sqlite/vector-table.js';
import { SqliteCommands } from '../src/writer/sqlite/adapter.js';
import { cellFor } from '../src/writer/commands/vectors.js';
import { runNow } from '../src/writer/commands/run.js';
import type { CommandOf } from '../src/shared/protocol/writer.js';
import { cellCountFor, nearestCentroid, nearestCentroids, probeCountFor, sampleIndexes, trainCentroids, trainIndex } from '../src/workers/ivf/kmeans.js';
import { Corpus } from '../bench/lib/corpus.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { VectorCells } from '../src/workers/sqlite/ivf-cells.js';
import { loadConfig } from '../src/shared/config.js';
import { openForWriting } from '../src/cli/storage/offline-db.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { memoryInserter, unit } from './support/rows.js';
import { post, startTestService, tempDir, type TestService } from './support/service.js';

function dotOf(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}


/** Points scattered tightly around `centres` (unit vectors), `per` each, deterministically. */
function clusters(centres: number[][], per: number, spread = 0.1): { points: Float32Array[]; labels: number[] } {
  const points: Float32Array[] = [];
  const labels: number[] = [];
  let seed = 12345;
  const noise = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5) * spread;
  centres.forEach((centre, label) => {
    for (let i = 0; i < per; i++) {
      points.push(unit(centre.map((c) => c + noise())));
      labels.push(label);
    }
  });
  return { points, labels };
}

describe('IVF maths', () => {
  const centres = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]];

  test('k-means finds well-separated clusters: one centroid per cluster, every point with its own', () => {
    const { points, labels } = clusters(centres, 40);
    const centroids = trainCentroids(points, 4);
    const cellOfLabel = new Map<number, number>();
    points.forEach((point, i) => {
      const cell = nearestCentroid(centroids, point);
      if (!cellOfLabel.has(labels[i])) cellOfLabel.set(labels[i], cell);
      assert.equal(cell, cellOfLabel.get(labels[i]), `point ${i} left its cluster's cell`);
    });
    assert.equal(new Set(cellOfLabel.values()).size, 4, 'two clusters share a cell');
    for (let c = 0; c < centroids.count; c++) {
      const row = centroids.data.subarray(c * 4, c * 4 + 4);
      assert.ok(Math.abs(Math.hypot(...row) - 1) < 1e-5, 'centroids are unit length');
    }
  });

  test('more cells than distinct points: no cell is left empty or NaN', () => {
    const points = [unit([1, 0, 0, 0]), unit([0, 1, 0, 0])].flatMap((p) => Array.from({ length: 5 }, () => p));
    const centroids = trainCentroids(points, 6);
    assert.equal(centroids.count, 6);
    assert.ok(centroids.data.every(Number.isFinite));
  });

  test('nearest centroids come best first', () => {
    const centroids = { count: 3, dimensions: 2, data: Float32Array.from([1, 0, 0, 1, Math.SQRT1_2, Math.SQRT1_2]) };
    assert.deepEqual(nearestCentroids(centroids, unit([1, 0.1]), 2), [0, 2]);
    assert.deepEqual(nearestCentroids(centroids, unit([0.1, 1]), 5), [1, 2, 0]);
  });

  test('sampling is uniform without repeats, and the same for the same seed', () => {
    const picks = sampleIndexes(1000, 100, 7);
    assert.equal(new Set(picks).size, 100);
    assert.ok(picks.every((i) => i >= 0 && i < 1000));
    assert.deepEqual(sampleIndexes(1000, 100, 7), picks);
    assert.deepEqual(sampleIndexes(5, 10, 7), [0, 1, 2, 3, 4]);
  });

  test('cell and probe counts grow with the namespace, within bounds', () => {
    assert.equal(cellCountFor(100), 16);
    assert.equal(cellCountFor(1_000_000), 500);
    assert.equal(cellCountFor(1e12), 2048);
    assert.equal(probeCountFor(4), 4);
    assert.equal(probeCountFor(158), 8);
    assert.equal(probeCountFor(500), 25);
  });

  test('k-means++ seeding gives a small cluster its own cell beside a dense one', () => {
    // 400 points tightly around one direction, 5 around each of seven others: seeds drawn
    // uniformly would land mostly in the dense cluster and leave small ones sharing a cell.
    const dims = 8;
    const axis = (i: number) => Array.from({ length: dims }, (_, d) => (d === i ? 1 : 0));
    const { points: dense } = clusters([axis(0)], 400, 0.01);
    const small = clusters([1, 2, 3, 4, 5, 6, 7].map(axis), 5, 0.01);
    for (const seed of [1, 2, 3]) {
      const centroids = trainCentroids([...dense, ...small.points], 8, seed);
      const cellOf = new Map<number, Set<number>>();
      small.points.forEach((point, i) => {
        const cell = nearestCentroid(centroids, point);
        cellOf.set(cell, (cellOf.get(cell) ?? new Set()).add(small.labels[i]));
      });
      assert.ok([...cellOf.values()].every((labels) => labels.size === 1), `seed ${seed}: two small clusters share a cell`);
      assert.equal(cellOf.size, 7, `seed ${seed}: a small cluster has no cell of its own`);
    }
  });

  test('at the default probes IVF finds ≥ 75% of the exact 50 nearest neighbours on a fixed synthetic set', async () => {
    // The scale bench's corpus and embedder, small enough for a test: 8,000 texts, 45 cells,
    // 8 probed (bench:scale measures the same at 100k and 1M).
    const corpus = new Corpus(42, 400);
    const texts = Array.from({ length: 8_000 }, () => (corpus.next() < 0.3 ? corpus.message(corpus.entity()) : corpus.fact(corpus.entity())));
    const embedder = new HashingEmbedder(256);
    const vectors = await embedder.embed(texts);
    const queries = await embedder.embed(Array.from({ length: 30 }, () => corpus.query()));
    const { centroids } = trainIndex(vectors.map((_, i) => i), (i) => vectors[i]);
    const cellOf = vectors.map((vector) => nearestCentroid(centroids, vector));
    let found = 0;
    for (const query of queries) {
      const exact = vectors.map((vector, i) => ({ i, similarity: dotOf(query, vector) }))
        .sort((a, b) => b.similarity - a.similarity).slice(0, 50);
      const probed = new Set(nearestCentroids(centroids, query, probeCountFor(centroids.count)));
      found += exact.filter(({ i }) => probed.has(cellOf[i])).length / 50;
    }
    const recall = found / queries.length;
    assert.ok(recall >= 0.75, `IVF found ${(100 * recall).toFixed(1)}% of the exact top 50`);
  });
});

describe('writer: generations and moves', () => {
  let db: Db;
  let ns: number;
  /** The IVF commands' rules over SQLite, and the cell check they share. */
  const vectorIndexWriter = (db: Db, ns: number) => {
    const commands = new SqliteCommands(db, { episodeTtlMs: 0 }, ns);
    return {
      install: (command: CommandOf<'installVectorGeneration'>) => commands.run(command),
      move: (command: CommandOf<'moveVectors'>) => commands.run(command),
      retire: () => commands.run({ type: 'retireVectorGenerations' }),
      cellFor: (namespaceId: number, cell: number) => runNow(cellFor(commands.context, namespaceId, cell)),
    };
  };
  let index: ReturnType<typeof vectorIndexWriter>;
  const dir = tempDir('memrt-ivf-');

  before(() => {
    db = openDatabase(join(dir, 'w.db'), { readonly: false, synchronous: 'NORMAL' });
    migrate(db);
    prepareVectorTable(db, { id: 'hash-2', dimensions: 2 }, false);
    ns = ensureNamespace(db, 'default');
    index = vectorIndexWriter(db, ns);
    const insertMemory = memoryInserter(db, ns);
    const insertVector = db.prepare(INSERT_VECTOR_SQL);
    for (let i = 1; i <= 4; i++) {
      const rowid = insertMemory({ id: `m${i}`, content: `memory ${i}`, embedded: 1 });
      insertVector.run(BigInt(rowid), BigInt(ns), 0n, blobOf(unit([i, 5 - i])));
    }
  });
  after(() => db.close());

  const cellsOf = (generation: number) =>
    db.prepare('SELECT cell FROM vector_cells WHERE generation = ? ORDER BY cell').pluck().all(generation) as number[];
  const placement = () => db.prepare('SELECT vector_cell FROM memories ORDER BY rowid').pluck().all() as number[];
  const vec0Cells = () => db.prepare('SELECT cell FROM memory_vectors ORDER BY rowid').pluck().all().map(Number);

  test('only cells of the newest generation are accepted', () => {
    const first = index.install({ type: 'installVectorGeneration', trainedOn: 4, centroids: { count: 2, dimensions: 2, data: Float32Array.from([1, 0, 0, 1]) } });
    const [a, b] = cellsOf(first.generation);
    assert.equal(index.cellFor(ns, a), a);
    assert.equal(index.cellFor(ns, 9999), 0, 'unknown cell');
    assert.equal(index.move({ type: 'moveVectors', moves: [{ rowid: 1, cell: a }, { rowid: 2, cell: b }] }).moved, 2);
    assert.deepEqual(placement(), [a, b, 0, 0]);
    assert.deepEqual(vec0Cells(), [a, b, 0, 0], 'the vec0 partition follows memories.vector_cell');

    const second = index.install({ type: 'installVectorGeneration', trainedOn: 4, centroids: { count: 1, dimensions: 2, data: Float32Array.from([1, 0]) } });
    const [c] = cellsOf(second.generation);
    assert.ok(c > b, 'a new generation takes higher cell ids');
    assert.equal(index.cellFor(ns, a), 0, 'a cell of the replaced generation now means unassigned');
    assert.equal(index.move({ type: 'moveVectors', moves: [{ rowid: 3, cell: a }] }).moved, 0);

    assert.equal(index.retire().retired, 0, 'the old generation still holds vectors');
    assert.equal(index.move({ type: 'moveVectors', moves: [1, 2, 3, 4].map((rowid) => ({ rowid, cell: c })) }).moved, 4);
    assert.equal(index.move({ type: 'moveVectors', moves: [{ rowid: 1, cell: c }] }).moved, 0, 'already placed');
    assert.deepEqual(vec0Cells(), [c, c, c, c]);
    assert.equal(index.retire().retired, 1);
    assert.deepEqual(cellsOf(first.generation), []);
    assert.equal(db.prepare('SELECT count(*) FROM vector_generations').pluck().get(), 1);
  });

  test('a row marked embedded without a vector goes back to the embedding backlog instead of blocking', () => {
    const rowid = memoryInserter(db, ns)({ id: 'orphan', content: 'o', embedded: 1 });
    const newestCell = Math.max(...(db.prepare('SELECT cell FROM vector_cells').pluck().all() as number[]));
    assert.deepEqual(index.move({ type: 'moveVectors', moves: [{ rowid, cell: newestCell }] }), { moved: 0, repaired: 1 });
    assert.deepEqual(db.prepare('SELECT embedded, vector_cell FROM memories WHERE rowid = ?').get(rowid), { embedded: 0, vector_cell: 0 });
  });

  test('a pre-IVF vector table is rebuilt with the cell partition (by the CLI and the writer), vectors kept and unassigned', () => {
    const path = join(dir, 'old.db');
    const old = openDatabase(path, { readonly: false, synchronous: 'NORMAL' });
    migrate(old);
    const oldNs = ensureNamespace(old, 'default');
    old.exec(`CREATE VIRTUAL TABLE memory_vectors USING vec0(namespace_id integer partition key, embedding float[2] distance_metric=cosine)`);
    old.exec(`INSERT INTO meta (key, value) VALUES ('embedder', 'hash-2'), ('embedding_dimensions', '2')`);
    old.prepare('INSERT INTO memory_vectors (rowid, namespace_id, embedding) VALUES (?, ?, ?)').run(7n, BigInt(oldNs), blobOf(unit([3, 4])));
    old.close();
    // The offline commands (restore, import) upgrade it before writing vectors, as the service does.
    const target = openForWriting(loadConfig({ SERVICE_PATH: path }), 'import', { create: false, upgradeVectors: true });
    target.db.prepare(INSERT_VECTOR_SQL).run(8n, BigInt(oldNs), 0n, blobOf(unit([1, 1])));
    target.close();
    const upgraded = openDatabase(path, { readonly: false });
    prepareVectorTable(upgraded, { id: 'hash-2', dimensions: 2 }, false);
    const rows = upgraded.prepare('SELECT rowid, cell, embedding FROM memory_vectors ORDER BY rowid').all() as { rowid: number; cell: number; embedding: Buffer }[];
    assert.equal(rows.length, 2);
    assert.equal(rows[0].rowid, 7);
    assert.equal(Number(rows[0].cell), 0);
    assert.deepEqual([...new Float32Array(rows[0].embedding.buffer.slice(rows[0].embedding.byteOffset, rows[0].embedding.byteOffset + 8))], [...unit([3, 4])]);
    upgraded.close();
  });
});

describe('service: the index follows the vectors', () => {
  let t: TestService;
  const DIMENSIONS = 64;
  const topics = ['sailing', 'violin', 'chess', 'pottery', 'climbing', 'baking', 'astronomy', 'gardening', 'fencing', 'origami'];
  let stored = 0;

  /** Stores `n` more distinct facts, then waits for their vectors. */
  async function remember(n: number): Promise<void> {
    const facts = Array.from({ length: n }, () => {
      const i = stored++;
      return { entity: `person${i % 37}`, fact: `person${i % 37} practises ${topics[i % topics.length]} with friend${i} on day ${i * 7 % 31}` };
    });
    for (let i = 0; i < facts.length; i += 25) {
      const replies = await Promise.all(facts.slice(i, i + 25).map((f) => post(t.base, '/v1/remember', f)));
      for (const r of replies) assert.equal(r.status, 201);
    }
    await t.service.backfill.idle();
  }

  const readDb = () => openDatabase(join(t.dir, 'memory.db'), { readonly: true });
  function state() {
    const db = readDb();
    try {
      return {
        generations: db.prepare('SELECT generation, trained_on AS trainedOn FROM vector_generations ORDER BY generation').all() as { generation: number; trainedOn: number }[],
        firstCell: db.prepare(`SELECT min(cell) FROM vector_cells WHERE generation = (SELECT max(generation) FROM vector_generations)`).pluck().get() as number | null,
        unplaced: db.prepare('SELECT count(*) FROM memories WHERE embedded = 1 AND vector_cell = 0').pluck().get() as number,
        cells: new Set(db.prepare('SELECT vector_cell FROM memories WHERE embedded = 1').pluck().all() as number[]),
        mismatched: db.prepare(`SELECT count(*) FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid WHERE v.cell != m.vector_cell`).pluck().get() as number,
      };
    } finally {
      db.close();
    }
  }

  before(async () => {
    t = await startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: String(DIMENSIONS), SERVICE_VECTOR_INDEX_MIN: '100', SERVICE_VECTOR_CODES_MB: '64' });
  });
  after(() => t.close());

  test('below the threshold there is no index: every vector waits in cell 0', async () => {
    await remember(90);
    await t.service.vectorIndexer.flush();
    const s = state();
    assert.equal(s.generations.length, 0);
    assert.equal(s.unplaced, 90);
  });

  test('past it, the indexer trains a generation and moves every vector into its cells', async () => {
    await remember(30);
    await t.service.vectorIndexer.flush();
    const s = state();
    assert.equal(s.generations.length, 1);
    assert.equal(s.generations[0].trainedOn, 120);
    assert.equal(s.unplaced, 0);
    assert.equal(s.mismatched, 0);
    assert.ok(s.cells.size > 4, `vectors spread over ${s.cells.size} cells`);
    assert.ok([...s.cells].every((cell) => cell >= s.firstCell!));
  });

  test('new vectors go straight into the current cells, without the indexer', async () => {
    // A slow machine may start an upkeep run meanwhile (writes poke it); it must have had nothing to move.
    const moved = t.service.vectorIndexer.moved;
    await remember(40);
    await t.service.vectorIndexer.flush();
    assert.equal(t.service.vectorIndexer.moved, moved, 'the indexer placed vectors: they did not go straight into their cells');
    const s = state();
    assert.equal(s.unplaced, 0);
    assert.equal(s.mismatched, 0);
  });

  test('every memory is found again by its own vector through the probed cells', async () => {
    const db = readDb();
    try {
      const ns = db.prepare("SELECT id FROM namespaces WHERE name = 'default'").pluck().get() as number;
      // One probe: only the query's nearest cell (plus cell 0) is scanned.
      const engine = new RecallEngine(new SqliteReadPort(db, ns, 'default', { minSimilarity: 0.2, vectorProbes: 1 }), { only: ['vector'] });
      const embedder = new HashingEmbedder(DIMENSIONS);
      const rows = db.prepare('SELECT rowid, content FROM memories WHERE embedded = 1').all() as { rowid: number; content: string }[];
      const vectors = await embedder.embed(rows.map((r) => r.content));
      const cellOf = new Map(db.prepare('SELECT rowid, vector_cell FROM memories WHERE embedded = 1').all()
        .map((r) => [(r as { rowid: number }).rowid, (r as { vector_cell: number }).vector_cell]));
      const cells = new VectorCells(db, ns, 1);
      let missed = 0;
      let nearButUnprobed = 0;
      for (const [i, row] of rows.entries()) {
        const hits = await engine.recall({ query: row.content, entity: null, types: null, limit: 3, queryVector: vectors[i] });
        if (!hits.some((hit) => hit.row.rowid === row.rowid)) missed++;
        // Only the probed cell is scanned: a close neighbour living in another cell never shows.
        const probed = new Set(cells.probe(vectors[i]));
        for (const hit of hits) assert.ok(probed.has(cellOf.get(hit.row.rowid)!), 'a memory from an unprobed cell was returned');
        const closest = rows.map((other, j) => ({ rowid: other.rowid, similarity: dotOf(vectors[i], vectors[j]) }))
          .filter((other) => other.rowid !== row.rowid && other.similarity > 0.2).sort((a, b) => b.similarity - a.similarity)[0];
        if (closest && !probed.has(cellOf.get(closest.rowid)!)) nearButUnprobed++;
      }
      assert.equal(missed, 0, `${missed} of ${rows.length} memories not found by their own vector`);
      assert.ok(nearButUnprobed > 0, 'every nearest neighbour shared the query cell: the cell restriction went untested');
    } finally {
      db.close();
    }
  });

  test('grown 4× since training: a new generation replaces the old one, nothing left behind', async () => {
    const before = state();
    await remember(4 * 120 - stored);
    await t.service.vectorIndexer.flush();
    const s = state();
    assert.equal(s.generations.length, 1, 'the old generation was retired');
    assert.ok(s.generations[0].generation > before.generations[0].generation);
    assert.equal(s.generations[0].trainedOn, 480);
    assert.equal(s.unplaced, 0);
    assert.equal(s.mismatched, 0);
    assert.ok([...s.cells].every((cell) => cell >= s.firstCell!));
    const r = await post(t.base, '/v1/recall', { query: 'who practises origami with friend9', limit: 5 });
    assert.equal(r.status, 200);
    assert.ok(r.body.memories.some((m: { content: string }) => m.content.includes('friend9 ')));
    // Indexed, so the pool thread scanned its in-memory codes (docs/vector-codes.md), not vec0.
    const metrics = await (await fetch(`${t.base}/metrics`)).text();
    assert.match(metrics, /recall_stage_duration_seconds_count\{stage="vector_codes"\} [1-9]/);
  });

  test('deleting an entity removes its vectors from their cells', async () => {
    const r = await fetch(`${t.base}/v1/entities/person3`, { method: 'DELETE' });
    assert.equal(r.status, 200);
    const db = readDb();
    try {
      assert.equal(db.prepare('SELECT count(*) FROM memory_vectors v WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.rowid = v.rowid)').pluck().get(), 0);
    } finally {
      db.close();
    }
    assert.equal(state().mismatched, 0);
  });
});

describe('service: an index trained before the k-means++ cells', () => {
  test('is retrained by the upkeep on its own after the upgrade (migration 9), every vector moved', async () => {
    const path = join(tempDir(), 'memory.db');
    const env = { SERVICE_PATH: path, SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '32', SERVICE_VECTOR_INDEX_MIN: '100' };
    const generations = () => {
      const db = openDatabase(path, { readonly: true });
      try {
        return {
          list: db.prepare('SELECT generation, trained_on AS trainedOn FROM vector_generations ORDER BY generation').all() as { generation: number; trainedOn: number }[],
          unplaced: db.prepare('SELECT count(*) FROM memories WHERE embedded = 1 AND vector_cell < (SELECT min(cell) FROM vector_cells)').pluck().get() as number,
        };
      } finally {
        db.close();
      }
    };
    let t = await startTestService(env);
    try {
      for (let i = 0; i < 150; i += 25) {
        const replies = await Promise.all(Array.from({ length: 25 }, (_, j) => post(t.base, '/v1/remember', { entity: `p${(i + j) % 9}`, fact: `p${(i + j) % 9} keeps note ${i + j} about topic ${(i + j) % 13}` })));
        for (const r of replies) assert.equal(r.status, 201);
      }
      await t.service.backfill.idle();
      await t.service.vectorIndexer.flush();
    } finally {
      await t.close();
    }
    const old = generations().list;
    assert.equal(old.length, 1);
    assert.equal(old[0].trainedOn, 150);
    // The file as the previous release left it: its cells were trained by the old seeding.
    const file = openDatabase(path, { readonly: false });
    const KMEANS_PLUS_PLUS_MIGRATION = 9; // sql-schema.ts: the one that resets trained_on
    // Nor had it migration 14's vector stamp.
    file.exec('DROP INDEX memories_by_vector_seq; ALTER TABLE memories DROP COLUMN vector_seq');
    file.pragma(`user_version = ${KMEANS_PLUS_PLUS_MIGRATION - 1}`);
    file.close();
    t = await startTestService(env);
    try {
      await t.service.vectorIndexer.flush();
    } finally {
      await t.close();
    }
    const after = generations();
    assert.equal(after.list.length, 1, 'the old generation was retired');
    assert.ok(after.list[0].generation > old[0].generation, 'a new generation was trained');
    assert.equal(after.list[0].trainedOn, 150);
    assert.equal(after.unplaced, 0, 'every vector lives in the new cells');
  });
});
