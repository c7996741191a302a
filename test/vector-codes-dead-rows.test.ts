// Dead codes clustered near a query: memories deleted or re-embedded after the namespace's int8
// codes were built keep their old codes in the store until its next full build. When many of
// them are near-duplicates of a query they fill the re-rank's shortlist (max(60, 1.2k), widened
// only by the store-wide dead share), and the exact re-rank, which reads the file, finds few
// live rows among them: the recall must widen the shortlist until it holds k live rows (or the
// probed cells have no more), and must not widen when nothing was lost. A real SQLite file, the
// writer's own index commands, a store built by the background task, and the recall engine.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { blobOf } from '../src/shared/meta.js';
import { INSERT_VECTOR_SQL } from '../src/shared/sql-schema.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { prepareVectorTable } from '../src/writer/sqlite/vector-table.js';
import { SqliteCommands } from '../src/writer/sqlite/adapter.js';
import { nextVectorSeq } from '../src/writer/sqlite/vector-seq.js';
import { scansServed, type SharedCodesHandle } from '../src/workers/ivf/vector-codes.js';
import { refreshVectorCodes } from '../src/workers/sqlite/vector-codes.js';
import { VectorCells } from '../src/workers/sqlite/ivf-cells.js';
import { nearestCentroid, trainIndex } from '../src/workers/ivf/kmeans.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { Corpus } from '../bench/lib/corpus.js';
import { memoryInserter } from './support/rows.js';
import { tempDir } from './support/service.js';

describe('dead codes near a query: the re-rank widens until it holds k live rows', () => {
  const DIMENSIONS = 64;
  const BACKGROUND = 2000;
  const DUPLICATES = 400;
  /** Near-duplicates left alive: every tenth. The rest are deleted or re-embedded elsewhere. */
  const alive = (i: number) => i % 10 === 0;
  const QUERY = 'Harriet tunes old violins in the attic above the bakery every Sunday morning';
  const dir = tempDir('memrt-dead-codes-');
  const embedder = new HashingEmbedder(DIMENSIONS);
  const vectorOf = async (text: string) => (await embedder.embed([text]))[0];
  let writer: Db;
  let reader: Db;
  let background: Db;
  let namespaceId = 0;
  let engine: RecallEngine;
  let store: SharedCodesHandle;
  const duplicates: number[] = [];
  const backgroundTexts: string[] = [];

  /** A recall through the store (as a pool task lent it), with the vector signal alone. */
  const recall = async (text: string, limit: number) => {
    const timings: Record<string, number> = {};
    const scansBefore = scansServed(store);
    const hits = await engine.recall({ query: text, entity: null, types: null, limit, queryVector: await vectorOf(text), vectorCodes: { handle: store } }, Date.now(), timings);
    return { rowids: hits.map((hit) => hit.row.rowid), coded: timings.vector_codes !== undefined, scans: scansServed(store) - scansBefore };
  };
  const newestCells = () => writer.prepare(`SELECT c.cell, c.centroid FROM vector_cells c JOIN vector_generations g ON g.generation = c.generation
    WHERE g.namespace_id = ? ORDER BY c.cell`).all(namespaceId) as { cell: number; centroid: Buffer }[];
  const cellFor = async (text: string) => {
    const cells = newestCells();
    const data = Float32Array.from(cells.flatMap((c) => [...new Float32Array(c.centroid.buffer.slice(c.centroid.byteOffset, c.centroid.byteOffset + c.centroid.byteLength))]));
    return cells[nearestCentroid({ count: cells.length, dimensions: DIMENSIONS, data }, await vectorOf(text))].cell;
  };

  before(async () => {
    writer = openDatabase(join(dir, 'dead.db'), { readonly: false, synchronous: 'NORMAL' });
    migrate(writer);
    prepareVectorTable(writer, { id: `hash-${DIMENSIONS}`, dimensions: DIMENSIONS }, false);
    namespaceId = ensureNamespace(writer, 'tenant-a');
    const corpus = new Corpus(11, 80);
    for (let i = 0; i < BACKGROUND; i++) backgroundTexts.push(`${corpus.fact(corpus.entity())} #${i}`);
    const duplicateTexts = Array.from({ length: DUPLICATES }, (_, i) => `${QUERY} take${i}`);
    const texts = [...backgroundTexts, ...duplicateTexts];
    const vectors = await embedder.embed(texts);
    const insert = memoryInserter(writer, namespaceId);
    const insertVector = writer.prepare(INSERT_VECTOR_SQL);
    const rowids: number[] = [];
    writer.transaction(() => texts.forEach((content, i) => {
      const rowid = insert({ id: `m${i}`, content, embedded: 1 });
      insertVector.run(BigInt(rowid), BigInt(namespaceId), 0n, blobOf(vectors[i]));
      rowids.push(rowid);
    }))();
    duplicates.push(...rowids.slice(BACKGROUND));
    // Indexed as the IVF upkeep does it: a generation trained and installed, every vector moved into its cell.
    const commands = new SqliteCommands(writer, { episodeTtlMs: 0 }, namespaceId);
    const { trainedOn, centroids } = trainIndex(rowids, (rowid) => vectors[rowids.indexOf(rowid)]);
    commands.run({ type: 'installVectorGeneration', trainedOn, centroids });
    const cells = newestCells().map((row) => row.cell);
    commands.run({ type: 'moveVectors', moves: rowids.map((rowid, i) => ({ rowid, cell: cells[nearestCentroid(centroids, vectors[i])] })) });
    commands.run({ type: 'retireVectorGenerations' });
    reader = openDatabase(join(dir, 'dead.db'), { readonly: true });
    background = openDatabase(join(dir, 'dead.db'), { readonly: true });
    store = refreshVectorCodes(background, namespaceId, new VectorCells(background, namespaceId), null, 2 ** 30, 0).handle!;
    assert.ok(store, 'a store was built');
    engine = new RecallEngine(new SqliteReadPort(reader, namespaceId, 'tenant-a', { minSimilarity: 0.2, vectorCodes: true }), { only: ['vector'] });
  });
  after(() => {
    reader.close();
    background.close();
    writer.close();
  });

  test('with no dead codes each look scans once: nothing is widened', async () => {
    const { rowids, coded, scans } = await recall(QUERY, 40);
    assert.ok(coded, 'the codes answered');
    assert.equal(scans, 1);
    assert.equal(rowids.length, 40);
    for (const rowid of rowids) assert.ok(duplicates.includes(rowid), 'the near-duplicates are the closest');
    for (let i = 0; i < BACKGROUND; i += 97) {
      const other = await recall(backgroundTexts[i], 10);
      assert.equal(other.scans, 1, `query ${i} widened with no dead code in the store`);
    }
    // Fewer close rows (similarity ≥ 0.15) in the whole namespace than the k = 160 a recall of 40
    // looks at: the re-rank comes back short, but its shortlist ran past them, so it does not widen.
    const sparse = 'Xylophone quokka';
    const vector = await vectorOf(sparse);
    const vectors = await embedder.embed([...backgroundTexts, ...Array.from({ length: DUPLICATES }, (_, i) => `${QUERY} take${i}`)]);
    const close = vectors.filter((v) => v.reduce((sum, x, d) => sum + x * vector[d], 0) >= 0.15).length;
    assert.ok(close > 0 && close < 160, `${close} close rows`);
    assert.equal((await recall(sparse, 40)).scans, 1, 'a query with few close neighbours widened');
  });

  /** The background memory least like the query: where a near-duplicate is re-embedded to be no neighbour at all. */
  const farthestFrom = async (text: string) => {
    const query = await vectorOf(text);
    const backgroundVectors = await embedder.embed(backgroundTexts);
    const similarities = backgroundVectors.map((vector) => vector.reduce((sum, v, d) => sum + v * query[d], 0));
    const farthest = similarities.indexOf(Math.min(...similarities));
    assert.ok(similarities[farthest] < 0.1);
    return { text: backgroundTexts[farthest], vector: backgroundVectors[farthest], cell: await cellFor(backgroundTexts[farthest]) };
  };
  /** Re-embedded (its content replaced): a new vector far from the query, stamped above the store's watermark. */
  const reembed = (rowid: number, elsewhere: { text: string; vector: Float32Array; cell: number }) => {
    writer.prepare('DELETE FROM memory_vectors WHERE rowid = ?').run(BigInt(rowid));
    writer.prepare('UPDATE memories SET content = ? WHERE rowid = ?').run(`${elsewhere.text} (${rowid})`, rowid);
    writer.prepare(INSERT_VECTOR_SQL).run(BigInt(rowid), BigInt(namespaceId), BigInt(elsewhere.cell), blobOf(elsewhere.vector));
    writer.prepare('UPDATE memories SET vector_cell = ?, vector_seq = ? WHERE rowid = ?').run(elsewhere.cell, nextVectorSeq(), rowid);
  };

  test('near-duplicates deleted or re-embedded elsewhere after the build: every live one is still found', async () => {
    const elsewhere = await farthestFrom(QUERY);
    writer.transaction(() => duplicates.forEach((rowid, i) => {
      if (alive(i)) return;
      if (i % 2 === 0) return reembed(rowid, elsewhere);
      writer.prepare('DELETE FROM memory_vectors WHERE rowid = ?').run(BigInt(rowid));
      writer.prepare('DELETE FROM memories WHERE rowid = ?').run(rowid);
    }))();
    const live = duplicates.filter((_, i) => alive(i));
    const { rowids, coded, scans } = await recall(QUERY, live.length);
    assert.ok(coded, 'the codes answered, not vec0');
    assert.ok(scans > 1, 'the shortlist was widened');
    const found = live.filter((rowid) => rowids.includes(rowid));
    assert.equal(found.length, live.length, `${found.length} of the ${live.length} live near-duplicates found`);
    assert.deepEqual(new Set(rowids), new Set(live));
  });

  test('dead codes past the widest shortlist (4,096 codes): vec0, which holds no dead vector, answers', async () => {
    // A second cluster: 6,000 near-duplicates of another query, in the store, then half re-embedded elsewhere.
    const QUERY2 = 'Ignatius mends fishing nets on the pier while the gulls argue about herring';
    const texts = Array.from({ length: 6000 }, (_, i) => `${QUERY2} cast${i}`);
    const vectors = await embedder.embed(texts);
    const cells = newestCells();
    const centroids = { count: cells.length, dimensions: DIMENSIONS, data: Float32Array.from(cells.flatMap((c) => [...new Float32Array(c.centroid.buffer.slice(c.centroid.byteOffset, c.centroid.byteOffset + c.centroid.byteLength))])) };
    const insert = memoryInserter(writer, namespaceId);
    const cluster: number[] = [];
    writer.transaction(() => texts.forEach((content, i) => {
      const rowid = insert({ id: `cast${i}`, content, embedded: 1 });
      const cell = cells[nearestCentroid(centroids, vectors[i])].cell;
      writer.prepare(INSERT_VECTOR_SQL).run(BigInt(rowid), BigInt(namespaceId), BigInt(cell), blobOf(vectors[i]));
      writer.prepare('UPDATE memories SET vector_cell = ?, vector_seq = ? WHERE rowid = ?').run(cell, nextVectorSeq(), rowid);
      cluster.push(rowid);
    }))();
    store = refreshVectorCodes(background, namespaceId, new VectorCells(background, namespaceId), null, 2 ** 30, 0).handle!;
    const elsewhere = await farthestFrom(QUERY2);
    writer.transaction(() => cluster.forEach((rowid, i) => i % 2 && reembed(rowid, elsewhere)))();
    // A filtered recall of 300 looks at k = 3,600 rows: its first shortlist (4,320 codes) is already
    // the widest, and half its codes are dead: the codes cannot answer.
    const limit = 300;
    const hits = await engine.recall({ query: QUERY2, entity: null, types: ['semantic'], limit, queryVector: await vectorOf(QUERY2), vectorCodes: { handle: store } }, Date.now(), {});
    const viaCodes = await recall(QUERY2, 10);
    assert.ok(viaCodes.coded, 'an unfiltered recall of 10 (k = 50) still widens within the bound and answers from the codes');
    const timings: Record<string, number> = {};
    await engine.recall({ query: QUERY2, entity: null, types: ['semantic'], limit, queryVector: await vectorOf(QUERY2), vectorCodes: { handle: store } }, Date.now(), timings);
    assert.equal(timings.vector_codes, undefined, 'vec0 answered');
    const live = new Set(cluster.filter((_, i) => i % 2 === 0));
    assert.equal(hits.length, limit);
    for (const hit of hits) assert.ok(live.has(hit.row.rowid), 'a re-embedded memory (or another) before the live near-duplicates');
  });
});
