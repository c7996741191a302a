// `npm run bench:scale -- --postgres` (issue 16): the scale bench's largest hash-256 database on
// PostgreSQL — a private PostgreSQL 15 primary plus a `pg_basebackup -R` streaming replica
// (test/support/postgres.ts, as CI starts them), and two service nodes (separate processes) on
// one database, each reading recall from the replica (SERVICE_READ_DATABASE_URL). Every figure
// stands beside the raw PostgreSQL operation measured in the same run:
// - seeding: the SQLite file the scale bench seeded directly is copied row for row (fast path,
//   no HTTP), then the nodes start on it;
// - recall p50/p99 over HTTP, c=1 on each node in turn, against the recall-shaped raw queries on
//   the replica (ts_rank_cd over the whole OR match + reading the probed IVF cells, scored in JS);
// - write rate: `remember` streamed over HTTP to both nodes at once, against raw transactions of
//   the same rows (memory + owner link) of the writers' mean group-commit size from two
//   connections, the generator's ceiling (the same stream to the bare uWS server) beside it;
// - replica lag (write position → replayed, bench/lib/replica-lag.ts) under each of the two streams.
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { postgresVectorIndexSql } from '../src/shared/postgres-schema.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { probedCells } from '../src/workers/ivf/cells.js';
import { connectReader, type Sql } from '../src/workers/postgres/client.js';
import { PostgresVectors } from '../src/workers/postgres/vectors.js';
import { queryTerms } from '../src/workers/recall/query-text.js';
import { connectWriter } from '../src/writer/postgres/connect.js';
import { migratePostgres } from '../src/writer/postgres/migrate.js';
import { mirrorIntoPostgres } from '../test/support/pg-mirror.js';
import { postgresUnavailable, startPrimary, startReplica, type PgCluster } from '../test/support/postgres.js';
import { createDatabase } from '../test/support/test-backend.js';
import { Corpus } from './lib/corpus.js';
import { runLoad, summarise, type LatencySummary, type LoadResult } from './lib/load.js';
import { rawLexical, rawNearest, rawWriter } from './lib/pg-raw.js';
import { startService, startUwsHello, type ServerProcess } from './lib/processes.js';
import { note } from './lib/progress.js';
import { sampleReplicaLag, type LagSummary } from './lib/replica-lag.js';
import { Scenarios } from './lib/scenarios.js';
import { entityCountFor } from './lib/seed.js';
import { rememberBodies, rememberStream, STREAM_CONNECTIONS, type WriteStreamResult } from './lib/write-stream.js';
import type { InsertLimit } from './limits.js';
import { fmt, table } from './lib/report.js';

const DEPTH = 50;
const DIMENSIONS = 256;

export interface PostgresScaleOptions {
  /** The seeded SQLite file (hash-256) to copy. */
  sqlitePath: string;
  memories: number;
  seconds: number;
  seed: number;
  workDir: string;
  /** wrk's body script (bench/lib/wrk.ts writeScript). */
  script: string;
  rawQueries: number;
}

export interface PostgresScale {
  memories: number;
  copySeconds: number;
  /** c=1 on node A, then on node B. */
  recall: LoadResult[];
  /** Recall snapshots by side over the recall phases, both nodes. */
  snapshots: { replica: number; primary: number };
  rawRecall: { lexical: LatencySummary; nearest: LatencySummary; total: LatencySummary };
  writes: WriteStreamResult;
  lag: LagSummary;
  rawWrites: { rowsPerSecond: number; rowsPerTransaction: number; connections: number };
  rawLag: LagSummary;
  /** The same write stream (two wrk) to the bare uWS server: the generator's ceiling. */
  generator: WriteStreamResult;
}

export async function measurePostgres(options: PostgresScaleOptions): Promise<PostgresScale | null> {
  const unavailable = postgresUnavailable();
  if (unavailable) {
    note(`PostgreSQL skipped: ${unavailable}`);
    return null;
  }
  let primary: PgCluster | null = null;
  let replica: PgCluster | null = null;
  const nodes: ServerProcess[] = [];
  const clients: Sql[] = [];
  try {
    primary = await startPrimary();
    replica = await startReplica(primary);
    const env = await createDatabase(primary.url, replica.url, 'scale');
    const sql = connectReader(env.SERVICE_DATABASE_URL!, { max: 2 });
    const lagPrimary = connectReader(env.SERVICE_DATABASE_URL!, { max: 1 });
    const onReplica = connectReader(env.SERVICE_READ_DATABASE_URL!, { max: 1 });
    clients.push(sql, lagPrimary, onReplica);

    const copyStarted = performance.now();
    await copyInto(env.SERVICE_DATABASE_URL!, sql, options.sqlitePath);
    await replayed(sql, onReplica);
    const copySeconds = (performance.now() - copyStarted) / 1000;
    note(`copied ${options.memories.toLocaleString('en')} memories into PostgreSQL (replayed on the replica) in ${copySeconds.toFixed(0)} s`);

    for (const name of ['a', 'b']) {
      nodes.push(await startService({
        dbPath: join(options.workDir, `pg-node-${name}.db`), embedder: 'hash', dimensions: DIMENSIONS,
        env: { ...env, SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0' },
      }));
    }
    const bases = nodes.map((n) => n.base);
    const entities = entityCountFor(options.memories);

    const recall: LoadResult[] = [];
    for (const [i, base] of bases.entries()) {
      const scenarios = new Scenarios(options.seed, entities);
      recall.push(await runLoad({ title: `recall @${options.memories.toLocaleString('en')} [PostgreSQL node ${'AB'[i]}]`, url: base, connections: 1, seconds: options.seconds, warmupSeconds: 2, requests: [scenarios.recall()] }));
    }
    const snapshots = await snapshotSides(bases);
    const rawRecall = await rawRecallTimes(onReplica, options);

    const lines = 8_000 * options.seconds;
    const bodies = rememberBodies(options.workDir, 'pg', 2, lines, options.seed, entities);
    const lagDuringWrites = sampleReplicaLag(lagPrimary, onReplica);
    const writes = await rememberStream(options.script, 'remember via two PostgreSQL nodes', bases, bodies, options.seconds);
    const lag = await lagDuringWrites.stop();
    if (writes.nodes.some((n) => n.requests > lines)) note('WARNING: a node got more writes than its body file holds: some were updates');
    // The nodes stop before the raw stream: their backfill and index upkeep would share its CPU.
    for (const node of nodes.splice(0)) await node.stop();

    const rowsPerTransaction = Math.max(1, Math.round(writes.meanBatch));
    const raw = await rawWriter(sql, new Corpus(options.seed + 7, entities));
    const lagDuringRaw = sampleReplicaLag(lagPrimary, onReplica);
    const rawRates = await Promise.all([0, 1].map(async () => {
      let rows = 0;
      const started = performance.now();
      while (performance.now() - started < options.seconds * 1000) rows += await raw.perStatement(rowsPerTransaction);
      return rows / ((performance.now() - started) / 1000);
    }));
    const rawLag = await lagDuringRaw.stop();
    const rawWrites = { rowsPerSecond: rawRates[0]! + rawRates[1]!, rowsPerTransaction, connections: 2 };
    note(`raw PostgreSQL: ${Math.round(rawWrites.rowsPerSecond)} rows/s in ${rowsPerTransaction}-row transactions from 2 connections`);

    const hello = await startUwsHello();
    let generator: WriteStreamResult;
    try {
      generator = await rememberStream(options.script, 'the same stream to bare uWS', [hello.base, hello.base], bodies, Math.min(options.seconds, 5), false);
    } finally {
      await hello.stop();
    }
    return { memories: options.memories, copySeconds, recall, snapshots, rawRecall, writes, lag, rawWrites, rawLag, generator };
  } finally {
    for (const node of nodes) await node.stop();
    for (const client of clients) await client.end();
    await replica?.stop();
    await primary?.stop();
  }
}

/** The writer's migrations and vector index (as a node's first start would make), then every row of the file. */
async function copyInto(url: string, sql: Sql, sqlitePath: string): Promise<void> {
  const writer = connectWriter(url);
  try {
    await migratePostgres(writer);
    await writer.unsafe(postgresVectorIndexSql(DIMENSIONS));
  } finally {
    await writer.end();
  }
  const db = openDatabase(sqlitePath, { readonly: true });
  try {
    await mirrorIntoPostgres(db, sql);
  } finally {
    db.close();
  }
  // The visibility map, so the covering vector index is read alone (as autovacuum would leave it).
  await sql.unsafe('VACUUM ANALYZE');
}

/** Waits until the replica has replayed everything the primary has written so far. */
async function replayed(primary: Sql, replica: Sql): Promise<void> {
  const [{ lsn }] = await primary<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`;
  for (;;) {
    const [{ done }] = await replica<{ done: boolean }[]>`SELECT pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn AS done`;
    if (done) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function snapshotSides(bases: string[]): Promise<{ replica: number; primary: number }> {
  const sides = { replica: 0, primary: 0 };
  for (const base of bases) {
    const text = await (await fetch(`${base}/metrics`)).text();
    for (const side of ['replica', 'primary'] as const) {
      sides[side] += Number(new RegExp(`^memory_runtime_recall_snapshots_total\\{side="${side}"\\} (\\S+)`, 'm').exec(text)?.[1] ?? 0);
    }
  }
  return sides;
}

/** The recall-shaped raw queries on the replica, one query at a time (query embedding not counted). */
async function rawRecallTimes(replica: Sql, options: PostgresScaleOptions): Promise<PostgresScale['rawRecall']> {
  const corpus = new Corpus(options.seed, entityCountFor(options.memories));
  for (let i = 0; i < 2000; i++) corpus.next();
  const hasher = new HashingEmbedder(DIMENSIONS);
  const generations = await replica.begin((tx) => new PostgresVectors(1, 0.2).cellIndex(tx));
  const [lexical, nearest, total]: number[][] = [[], [], []];
  for (let i = 0; i < options.rawQueries + 5; i++) {
    const query = corpus.query();
    const [vector] = await hasher.embed([query]);
    const t0 = performance.now();
    await rawLexical(replica, queryTerms(query), DEPTH);
    const t1 = performance.now();
    await rawNearest(replica, 1, probedCells(generations, vector!, 0), vector!, DEPTH);
    const t2 = performance.now();
    // The first few warm the caches, as the service's first recalls do.
    if (i < 5) continue;
    lexical.push(t1 - t0);
    nearest.push(t2 - t1);
    total.push(t2 - t0);
  }
  const s = (v: number[]) => summarise(Float64Array.from(v));
  note(`raw PostgreSQL recall-shaped queries on the replica: p50 ${s(total).p50.toFixed(2)} ms, p99 ${s(total).p99.toFixed(2)} ms`);
  return { lexical: s(lexical), nearest: s(nearest), total: s(total) };
}

/** The SQLite node's figures from the same run, at the same size. */
export interface SqliteBeside {
  recall: LoadResult;
  /** Per query: KNN (IVF when indexed) + FTS on the file. */
  rawRecall: LatencySummary;
  writes: WriteStreamResult;
  rawWrites: InsertLimit;
}

export function postgresReport(pg: PostgresScale, sqlite: SqliteBeside): string {
  const lat = (service: number, raw: number) => [fmt.ms(service), fmt.ms(raw), fmt.ratio(service / raw)];
  const none = ['—', '—', '—'];
  const [a, b] = pg.recall as [LoadResult, LoadResult];
  const sqliteWrites = `${fmt.int(sqlite.rawWrites.rowsPerSecond)} (${sqlite.rawWrites.rowsPerTransaction}-row txns)`;
  const rows: (string | number)[][] = [
    ['remember/s over HTTP (raw: rows/s)', fmt.int(pg.writes.rps), `${fmt.int(pg.rawWrites.rowsPerSecond)} (${pg.rawWrites.rowsPerTransaction}-row txns × 2)`, fmt.pct(pg.writes.rps / pg.rawWrites.rowsPerSecond),
      fmt.int(sqlite.writes.rps), sqliteWrites, fmt.pct(sqlite.writes.rps / sqlite.rawWrites.rowsPerSecond)],
    ['recall p50 ms, c=1, node A', ...lat(a.latencyMs.p50, pg.rawRecall.total.p50), ...lat(sqlite.recall.latencyMs.p50, sqlite.rawRecall.p50)],
    ['recall p99 ms, c=1, node A', ...lat(a.latencyMs.p99, pg.rawRecall.total.p99), ...lat(sqlite.recall.latencyMs.p99, sqlite.rawRecall.p99)],
    ['recall p50 ms, c=1, node B', ...lat(b.latencyMs.p50, pg.rawRecall.total.p50), ...none],
    ['recall p99 ms, c=1, node B', ...lat(b.latencyMs.p99, pg.rawRecall.total.p99), ...none],
    ['replica lag p50 ms (raw: under raw inserts)', ...lat(pg.lag.p50Ms, pg.rawLag.p50Ms), ...none],
    ['replica lag p95 ms (raw: under raw inserts)', ...lat(pg.lag.p95Ms, pg.rawLag.p95Ms), ...none],
  ];
  const errors = pg.writes.errors + sqlite.writes.errors + pg.recall.reduce((n, r) => n + r.errors + r.non2xx, 0) + sqlite.recall.errors + sqlite.recall.non2xx;
  return [
    table(`PostgreSQL 15 (primary + pg_basebackup -R streaming replica, loopback) through two service nodes, beside SQLite (one node) — ${pg.memories.toLocaleString('en')} memories, same run`,
      ['figure', 'PostgreSQL, 2 nodes', 'raw PostgreSQL', 'ratio', 'SQLite, 1 node', 'raw SQLite', 'ratio'], rows),
    `Seeding: the SQLite file seeded directly (no HTTP) copied row for row into PostgreSQL in ${pg.copySeconds.toFixed(0)} s; the nodes then started on it`,
    `(hash-256, SERVICE_READ_DATABASE_URL = the replica). Recall: autocannon, c=1 on node A then node B, ${pg.recall[0]!.seconds} s each, the same queries as`,
    `the SQLite row; ${fmt.int(pg.snapshots.replica)} of ${fmt.int(pg.snapshots.replica + pg.snapshots.primary)} recall snapshots were served by the replica. Raw recall = one query's recall-shaped reads in turn,`,
    `on the replica: ts_rank_cd over the whole OR match (top 50, ${fmt.ms(pg.rawRecall.lexical.p50)} ms p50) + the probed IVF cells' vectors scored in JS`,
    `(${fmt.ms(pg.rawRecall.nearest.p50)} ms p50); raw SQLite = IVF (or exact) KNN + FTS5 on the file, per query. Writes: wrk, ${STREAM_CONNECTIONS} connections per node,`,
    `distinct facts about seeded entities, for ${fmt.int(pg.recall[0]!.seconds)} s; mean group commit ${pg.writes.meanBatch.toFixed(1)} commands per transaction on PostgreSQL, ${sqlite.writes.meanBatch.toFixed(1)} on SQLite`,
    `(embedding-backfill flushes included); raw = transactions of that many memory rows + owner links (statement by statement on PostgreSQL, from`,
    `2 connections at once; one better-sqlite3 connection, synchronous=FULL on SQLite), written after the service stopped. Replica lag = time from a`,
    `WAL position on the primary to its replay on the replica (polled every 5 ms; ${fmt.int(pg.lag.samples)} samples under the service, ${fmt.int(pg.rawLag.samples)} under raw),`,
    `PostgreSQL's own pg_stat_replication.replay_lag p50/p95: ${fmt.ms(pg.lag.reportedP50Ms)}/${fmt.ms(pg.lag.reportedP95Ms)} ms under the service, ${fmt.ms(pg.rawLag.reportedP50Ms)}/${fmt.ms(pg.rawLag.reportedP95Ms)} ms under raw.`,
    `Generator ceiling: the same two wrk streams to the bare uWS server reach ${fmt.int(pg.generator.rps)} writes/s (${fmt.ratio(pg.generator.rps / Math.max(pg.writes.rps, sqlite.writes.rps))} the fastest service rate),`,
    `so the write figures are the service's, not the generator's. Errors and non-2xx over these phases: ${errors}.`,
  ].join('\n');
}
