// Superseded facts' vectors in retired twins of real IVF cells, read through the shared codes
// (vectorChunks maps twins back) and through vec0 (vecCells adds twins).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { blobOf } from '../src/shared/meta.js';
import { INSERT_VECTOR_SQL } from '../src/shared/sql-schema.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { prepareVectorTable } from '../src/writer/sqlite/vector-table.js';
import { SqliteCommands } from '../src/writer/sqlite/adapter.js';
import { refreshVectorCodes } from '../src/workers/sqlite/vector-codes.js';
import { VectorCells } from '../src/workers/sqlite/ivf-cells.js';
import { VectorCodesRegistry } from '../src/core/pool/vector-codes-registry.js';
import { createLogger } from '../src/shared/logger.js';
import { nearestCentroid, trainIndex } from '../src/workers/ivf/kmeans.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { Corpus } from '../bench/lib/corpus.js';
import { memoryInserter } from './support/rows.js';
import { tempDir } from './support/service.js';

describe('retired twins of IVF cells: codes and vec0', () => {
  const DIM = 32;
  const N = 1200;
  const path = join(tempDir('memrt-rev-'), 'r.db');
  const embedder = new HashingEmbedder(DIM);
  let writer: Db; let reader: Db; let background: Db;
  let ns = 0;
  const texts: string[] = []; const rowids: number[] = [];
  let registry: VectorCodesRegistry; let port: SqliteReadPort; let engine: RecallEngine;
  const vectorOf = async (t: string) => (await embedder.embed([t]))[0];
  const recall = async (i: number, useCodes: boolean, time?: object) => {
    const loan = useCodes ? registry.lend('t') : null;
    const timings: Record<string, number> = {};
    try {
      const hits = await engine.recall({ query: texts[i], entity: null, types: null, limit: 5, queryVector: await vectorOf(texts[i]), vectorCodes: { handle: loan?.handle ?? null }, ...(time ? { time } : {}) } as never, Date.now(), timings);
      return { rowids: hits.map((h) => h.row.rowid), coded: timings.vector_codes !== undefined };
    } finally { loan?.giveBack(); }
  };
  before(async () => {
    writer = openDatabase(path, { readonly: false, synchronous: 'NORMAL' });
    migrate(writer);
    prepareVectorTable(writer, { id: `hash-${DIM}`, dimensions: DIM }, false);
    ns = ensureNamespace(writer, 't');
    const corpus = new Corpus(5, 60);
    for (let i = 0; i < N; i++) texts.push(`${corpus.fact(corpus.entity())} #${i}`);
    const vectors = await embedder.embed(texts);
    const insert = memoryInserter(writer, ns);
    const iv = writer.prepare(INSERT_VECTOR_SQL);
    writer.transaction(() => texts.forEach((content, i) => {
      const rowid = insert({ id: `m${i}`, content, embedded: 1 });
      iv.run(BigInt(rowid), BigInt(ns), 0n, blobOf(vectors[i]));
      rowids.push(rowid);
    }))();
    const commands = new SqliteCommands(writer, { episodeTtlMs: 0 }, ns);
    const stored = (r: number) => { const b = writer.prepare('SELECT embedding FROM memory_vectors WHERE rowid = ?').pluck().get(BigInt(r)) as Buffer; return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)); };
    const { trainedOn, centroids } = trainIndex(rowids, stored);
    commands.run({ type: 'installVectorGeneration', trainedOn, centroids });
    const cells = (writer.prepare('SELECT cell FROM vector_cells ORDER BY cell').pluck().all() as number[]);
    commands.run({ type: 'moveVectors', moves: rowids.map((rowid) => ({ rowid, cell: cells[nearestCentroid(centroids, stored(rowid))] })) });
    // Every 10th memory superseded in the past (as a file written before retired cells), then the sweep.
    writer.prepare("UPDATE memories SET valid_until = 1000, superseded_by = 'gone' WHERE rowid IN (SELECT value FROM json_each(?))").run(JSON.stringify(rowids.filter((_, i) => i % 10 === 0)));
    let step = commands.run({ type: 'retireSupersededVectors', after: null, limit: 50 }) as { moved: number; done: boolean; next: never };
    let moved = step.moved;
    while (!step.done) { step = commands.run({ type: 'retireSupersededVectors', after: step.next, limit: 50 }) as never; moved += step.moved; }
    assert.equal(moved, N / 10);
    const negative = writer.prepare('SELECT count(*) FROM memory_vectors_chunks WHERE partition01 < 0').pluck().get() as number;
    assert.ok(negative > 1, `retired chunks: ${negative}`);
    reader = openDatabase(path, { readonly: true });
    background = openDatabase(path, { readonly: true });
    registry = new VectorCodesRegistry(async (_n, previous, limit) => refreshVectorCodes(background, ns, new VectorCells(background, ns), previous, limit, 0), 64 * 2 ** 20, createLogger('silent'), () => Date.now());
    port = new SqliteReadPort(reader, ns, 't', { minSimilarity: 0.2, vectorProbes: 2, vectorCodes: true });
    engine = new RecallEngine(port, { only: ['vector'] });
    await registry.refresh('t');
  });
  after(() => { reader?.close(); background?.close(); writer?.close(); });

  const ALL = { validAt: Date.now(), asOf: false, allVersions: true, since: null, until: null };
  for (const useCodes of [false, true]) {
    test(`${useCodes ? 'codes' : 'vec0'}: a superseded memory is first by its own vector with include_superseded, absent by default; a live one first by default`, async () => {
      for (let i = 0; i < N; i += 10) {
        const hist = await recall(i, useCodes, ALL);
        assert.equal(hist.coded, useCodes);
        assert.equal(hist.rowids[0], rowids[i], `superseded ${i} with include_superseded`);
        const now = await recall(i, useCodes);
        assert.ok(!now.rowids.includes(rowids[i]), `superseded ${i} in a default recall`);
        const live = await recall(i + 1, useCodes);
        assert.equal(live.rowids[0], rowids[i + 1], `live ${i + 1}`);
      }
    });
  }
});
