// `npm run bench:pg-reads`: the PostgreSQL read adapter (issue 16) against raw PostgreSQL doing
// the same lookup, and beside the SQLite adapter, over the same rows: a seeded SQLite file
// (hash-256 vectors, IVF index) copied row for row into a private PostgreSQL 15 cluster on
// loopback. Each operation is called in turn with the others (interleaved, as bench:explain),
// so load changes on this shared machine fall on all of them alike.
// Environment: BENCH_MEMORIES (default 100000), BENCH_SAMPLES (default 200).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { probedCells } from '../src/workers/ivf/cells.js';
import { connectReader } from '../src/workers/postgres/client.js';
import { PostgresReadPort } from '../src/workers/postgres/read-port.js';
import { PostgresVectors } from '../src/workers/postgres/vectors.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { queryTerms } from '../src/workers/recall/query-text.js';
import type { RecallContext } from '../src/workers/port/candidates.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { applyPostgresSchema, mirrorIntoPostgres } from '../test/support/pg-mirror.js';
import { postgresUnavailable, startPrimary } from '../test/support/postgres.js';
import { Corpus } from './lib/corpus.js';
import { rawLexical, rawNearest } from './lib/pg-raw.js';
import { note } from './lib/progress.js';
import { fmt, table } from './lib/report.js';
import { entityCountFor, seedDatabase } from './lib/seed.js';

const memories = Number(process.env.BENCH_MEMORIES ?? '100000');
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? '200');
const WARMUP = 20;
const QUERIES = 64;
const DEPTH = 50;

const unavailable = postgresUnavailable();
if (unavailable) throw new Error(`PostgreSQL unavailable: ${unavailable}`);
const dir = mkdtempSync(join(tmpdir(), 'pg-reads-'));
const primary = await startPrimary();
const sql = connectReader(primary.url, { max: 2 });
try {
  const path = join(dir, 'bench.db');
  await seedDatabase({ path, memories, embedder: { id: 'hash-256', dimensions: 256 }, label: '(hash-256, PostgreSQL reads)' });
  const db = openDatabase(path, { readonly: true });
  note('copying the rows into PostgreSQL');
  await applyPostgresSchema(sql, 256);
  await mirrorIntoPostgres(db, sql);
  await sql.unsafe('VACUUM ANALYZE'); // the visibility map, so the covering index is read alone

  const corpus = new Corpus(42, entityCountFor(memories));
  for (let i = 0; i < 1000; i++) corpus.next();
  const queries = Array.from({ length: QUERIES }, () => corpus.query());
  const vectors = await new HashingEmbedder(256).embed(queries);
  const contexts = queries.map((query, i): RecallContext => ({
    query, terms: queryTerms(query), queryVector: vectors[i], queryEntityIds: [], filter: { entityId: null, types: null }, depth: DEPTH, now: Date.now(),
  }));
  const pg = new PostgresReadPort(sql, 1, 'default', { minSimilarity: 0.2 });
  const sqlite = new SqliteReadPort(db, 1, 'default', { minSimilarity: 0.2 });
  const generations = await sql.begin((tx) => new PostgresVectors(1, 0.2).cellIndex(tx));
  const cellsOf = vectors.map((v) => probedCells(generations, v, 0));
  const request = (i: number) => ({ query: queries[i], entity: null, types: null, limit: 10, queryVector: vectors[i] });
  const pgEngine = new RecallEngine(pg);
  const sqliteEngine = new RecallEngine(sqlite);

  const tasks: Record<string, (i: number) => Promise<unknown>> = {
    'PG lexical: term selection, idf × ts_rank_cd': (i) => pg.snapshot((r) => r.lexical(contexts[i])),
    'raw PG: ts_rank_cd over the whole OR match, top 50': (i) => rawLexical(sql, contexts[i].terms, DEPTH),
    'SQLite bm25 signal': (i) => sqlite.snapshot((r) => r.lexical(contexts[i])),
    'PG vector: probed IVF cells, cell cache': (i) => pg.snapshot((r) => r.nearest(contexts[i])),
    'raw PG: read the probed cells, score in JS': (i) => rawNearest(sql, 1, cellsOf[i], vectors[i], DEPTH),
    'SQLite vector signal': (i) => sqlite.snapshot((r) => r.nearest(contexts[i])),
    'PG whole recall (engine, vector given)': (i) => pgEngine.recall(request(i)),
    'SQLite whole recall (engine, vector given)': (i) => sqliteEngine.recall(request(i)),
  };
  // Quality beside speed: how much of SQLite's top 10 (bm25 signal; whole recall) the PostgreSQL
  // adapter returns for the same query, over every query of the run.
  const overlap = async (get: (i: number) => Promise<number[]>, want: (i: number) => Promise<number[]>) => {
    let shared = 0;
    let total = 0;
    for (let i = 0; i < QUERIES; i++) {
      const expected = (await want(i)).slice(0, 10);
      const got = new Set((await get(i)).slice(0, 10));
      shared += expected.filter((id) => got.has(id)).length;
      total += expected.length;
    }
    return total === 0 ? 1 : shared / total;
  };
  const lexicalIds = (port: typeof pg | typeof sqlite) => async (i: number) => (await port.snapshot((r) => r.lexical(contexts[i]))).map((p) => p.rowid);
  const recallIds = (engine: RecallEngine) => async (i: number) => (await engine.recall(request(i))).map((hit) => hit.row.rowid);
  const lexicalAgreement = await overlap(lexicalIds(pg), lexicalIds(sqlite));
  const recallAgreement = await overlap(recallIds(pgEngine), recallIds(sqliteEngine));
  const names = Object.keys(tasks);
  const times = new Map(names.map((name) => [name, [] as number[]]));
  note(`${SAMPLES} calls of each, interleaved`);
  for (let s = 0; s < WARMUP + SAMPLES; s++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(s + k) % names.length];
      const started = performance.now();
      await tasks[name](s % QUERIES);
      if (s >= WARMUP) times.get(name)!.push(performance.now() - started);
    }
  }
  const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(values.length * q)];
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  console.log(table(`PostgreSQL reads, ${memories.toLocaleString('en')} memories (hash-256, ${generations.at(-1)?.centroids.count ?? 0} IVF cells), PostgreSQL 15 on loopback — ms`,
    ['operation', 'p50', 'p99', 'mean'],
    names.map((name) => {
      const t = times.get(name)!;
      return [name, fmt.ms(quantile(t, 0.5)), fmt.ms(quantile(t, 0.99)), fmt.ms(mean(t))];
    })));
  console.log(`top-10 agreement with SQLite over ${QUERIES} queries: lexical ${(lexicalAgreement * 100).toFixed(1)}%, whole recall ${(recallAgreement * 100).toFixed(1)}%`);
  db.close();
} finally {
  await sql.end();
  await primary.stop();
  rmSync(dir, { recursive: true, force: true });
}
