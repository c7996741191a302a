// `npm run bench:writes [-- --postgres]`: the writer's write rate through the store port
// (issue 16), each beside the raw engine's insert rate measured in the same run.
// - SQLite: `remember` through the real writer thread (WriterClient, 64 commands in flight, so
//   group commit forms ~64-command flushes), against raw 64-row transactions of the same INSERTs
//   (bench/limits.ts) on the same file, synchronous=FULL.
// - PostgreSQL (--postgres; a private cluster from /usr/lib/postgresql/15/bin): flushes of 64
//   `remember`s through the PostgreSQL adapter (one transaction, namespace lock, a savepoint per
//   command), from one node and from two nodes on one namespace at once, against raw 64-row
//   transactions of the same INSERTs (memory row + owner link, same indexes and GIN), both
//   statement by statement and as one multi-row INSERT. synchronous_commit=on (the default).
// With `--baseline-dist <other build's dist>` (repeatable: PostgreSQL then compares with each, the
// SQLite phase with the first), the SQLite phase runs that build's writer thread
// too, the two alternating phase by phase (BENCH_ROUNDS each, default 3) on files of their own,
// and the table gives each build's rate (median of its phases) and the ratio. With --postgres as
// well, the PostgreSQL phase does the same with both builds' write stores on one private cluster
// (a database each, flushes of 64 remembers), and counts the statements each build sends per
// flush (log_statement on that database, between two markers), listing the commonest.
// `--postgres-only` skips the SQLite phase.
// Environment: BENCH_SECONDS (per phase, default 5).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/shared/config.js';
import type { WriterCommand } from '../src/shared/protocol/writer.js';
import { WriterClient } from '../src/core/writer-client.js';
import { connectReader } from '../src/workers/postgres/client.js';
import { measureInsertLimits } from './limits.js';
import { Corpus } from './lib/corpus.js';
import { rawWriter } from './lib/pg-raw.js';
import { note } from './lib/progress.js';
import { fmt, machine, table, writeResults } from './lib/report.js';

const seconds = Number(process.env.BENCH_SECONDS?.trim() || '5');
const rounds = Number(process.env.BENCH_ROUNDS?.trim() || '3');
/** Every `--baseline-dist <dist>` given: SQLite compares with the first, PostgreSQL with each, all alternated on one cluster. */
const baselineDists = process.argv.flatMap((arg, i) => (arg === '--baseline-dist' ? [process.argv[i + 1] ?? ''] : []));
if (baselineDists.some((dist) => !dist || dist.startsWith('--'))) throw new Error("usage: node dist/bench/store-writes.js [--postgres | --postgres-only] [--baseline-dist <other build's dist folder>]...");
const baselineDist = baselineDists[0];
const IN_FLIGHT = 64;
const corpus = new Corpus(7, 500);
const entities = Array.from({ length: 200 }, () => corpus.entity());
const remember = (): Extract<WriterCommand, { type: 'remember' }> => {
  const owner = entities[Math.floor(corpus.next() * entities.length)]!;
  return { type: 'remember', entity: owner, fact: `${corpus.fact(owner)} (${randomUUID().slice(0, 8)})`, confidence: 0.9 };
};

/** Runs `step` (which reports how many rows it wrote) back to back for `seconds`; rows/s. */
async function rate(step: () => Promise<number>): Promise<number> {
  let rows = 0;
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) rows += await step();
  return rows / ((performance.now() - started) / 1000);
}

/** A build's writer thread: `send` a remember to the configured namespace. */
interface Writer { send: (command: ReturnType<typeof remember>) => Promise<unknown>; close: () => Promise<void>; dbPath: string }

/** A build's writer thread on a file of its own in `dir`. */
async function startWriter(dist: string | undefined, dir: string): Promise<Writer> {
  const modules = dist === undefined
    ? { loadConfig, WriterClient }
    : {
      loadConfig: (await import(pathToFileURL(join(dist, 'src', 'shared', 'config.js')).href)).loadConfig as typeof loadConfig,
      WriterClient: (await import(pathToFileURL(join(dist, 'src', 'core', 'writer-client.js')).href)).WriterClient as typeof WriterClient,
    };
  mkdirSync(dir, { recursive: true });
  const config = modules.loadConfig({ SERVICE_PATH: join(dir, 'memory.db') });
  const client = await modules.WriterClient.start(config);
  // Builds from before namespaces per request (the issue-24 baseline) send a command alone.
  const sendsNamespace = client.send.length >= 3;
  return {
    send: (command) => (sendsNamespace ? client.send(config.namespace, command) : (client.send as unknown as (c: typeof command) => Promise<unknown>)(command)),
    close: () => client.close(),
    dbPath: config.dbPath,
  };
}

/** 64 clients, each sending its next remember as soon as the last was acknowledged. */
const remembers = (writer: Writer) => () => rate(async () => {
  await Promise.all(Array.from({ length: IN_FLIGHT }, () => writer.send(remember())));
  return IN_FLIGHT;
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function sqlite(dir: string): Promise<(string | number)[][]> {
  const current = await startWriter(undefined, join(dir, 'current'));
  const rows: (string | number)[][] = [];
  let baseline: Writer | undefined;
  if (baselineDist !== undefined) {
    baseline = await startWriter(baselineDist, join(dir, 'baseline'));
    const rates = { current: [] as number[], baseline: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      // Alternated, the order switching each round: the box's load falls on both alike.
      const order = round % 2 === 0 ? (['current', 'baseline'] as const) : (['baseline', 'current'] as const);
      for (const build of order) rates[build].push(await remembers(build === 'current' ? current : baseline!)());
      note(`round ${round + 1}: current ${Math.round(rates.current.at(-1)!)}, baseline ${Math.round(rates.baseline.at(-1)!)} remembers/s`);
    }
    rows.push([`SQLite: remember via writer thread, this build vs ${baselineDist} (median of ${rounds})`,
      fmt.int(median(rates.current)), fmt.int(median(rates.baseline)), fmt.pct(median(rates.current) / median(rates.baseline))]);
  }
  const service = await remembers(current)();
  await current.close();
  // Both builds' writer threads load one native addon: this build's closes first (the other
  // order crashed the process), then the baseline's.
  await baseline?.close();
  note(`sqlite writer thread: ${Math.round(service)} remembers/s`);
  const [raw] = measureInsertLimits(current.dbPath, 10_000, seconds, [IN_FLIGHT]);
  rows.push(['SQLite: remember via writer thread vs raw 64-row txns', fmt.int(service), fmt.int(raw!.rowsPerSecond), fmt.pct(service / raw!.rowsPerSecond)]);
  return rows;
}

/** A build's PostgreSQL write store, as the bench drives it. */
interface PgStore {
  runBatch: (batch: { id: number; namespace: string; command: ReturnType<typeof remember> }[]) => Promise<{ replies: { ok: boolean }[] }>;
  close: () => Promise<void>;
}

/** One build's PostgreSQL write store on the database at `url` (`dist` undefined: this build). */
async function openPgStore(dist: string | undefined, url: string, dir: string): Promise<{ store: PgStore; namespace: string }> {
  const load = async (path: string) => import(pathToFileURL(join(dist!, 'src', ...path.split('/'))).href);
  const config = (dist === undefined ? loadConfig : (await load('shared/config.js')).loadConfig as typeof loadConfig)({ SERVICE_PATH: join(dir, 'unused.db') });
  const open = dist === undefined
    ? (await import('../src/writer/postgres/adapter.js')).openPostgresWriteStore
    : (await load('writer/postgres/adapter.js')).openPostgresWriteStore as typeof import('../src/writer/postgres/adapter.js').openPostgresWriteStore;
  // The issue-24 baseline's requests carry no namespace: the extra field is ignored there.
  return { store: await open(url, config) as unknown as PgStore, namespace: config.namespace };
}

/** Flushes of 64 remembers through a store; each reports its rows. */
const pgFlush = ({ store, namespace }: { store: PgStore; namespace: string }) => async () => {
  const { replies } = await store.runBatch(Array.from({ length: IN_FLIGHT }, (_, id) => ({ id, namespace, command: remember() })));
  if (!replies.every((r) => r.ok)) throw new Error('a remember failed');
  return IN_FLIGHT;
};

/** What the server logged for `database` between the two markers: statements and their time (ms), by their first words. */
function loggedStatements(log: string, database: string, from: string, to: string): Map<string, { n: number; ms: number }> {
  const counts = new Map<string, { n: number; ms: number }>();
  let inside = false;
  // log_min_duration_statement = 0: the extended protocol's parse and bind are logged apart
  // from the execute; their time counts, the statement once (at its execute).
  for (const line of log.split('\n')) {
    const m = /^(\S+) LOG:  duration: ([\d.]+) ms  (statement|execute|parse|bind)[^:]*: (.*)$/.exec(line);
    if (!m || m[1] !== database) continue;
    if (m[4]!.includes(from)) inside = true;
    else if (m[4]!.includes(to)) inside = false;
    else if (inside) {
      const shape = m[4]!.replace(/\s+/g, ' ').slice(0, 70);
      const entry = counts.get(shape) ?? { n: 0, ms: 0 };
      entry.ms += Number(m[2]);
      if (m[3] === 'statement' || m[3] === 'execute') entry.n++;
      counts.set(shape, entry);
    }
  }
  return counts;
}

/** This build against each of `dists` on one cluster: rates alternated round by round, then statements per flush. */
async function postgresAgainstBaselines(cluster: { url: string; dir: string; sql: (s: string, db?: string) => Promise<string> }, dists: string[]): Promise<(string | number)[][]> {
  // 'current' is this build; 'baseline', 'baseline2', … the dists in the order given.
  const builds = ['current', ...dists.map((_, i) => (i === 0 ? 'baseline' : `baseline${i + 1}`))];
  const distOf = (build: string) => (build === 'current' ? undefined : dists[builds.indexOf(build) - 1]);
  const stores: Record<string, { store: PgStore; namespace: string }> = {};
  const urls: Record<string, string> = {};
  for (const build of builds) {
    await cluster.sql(`CREATE DATABASE ab_${build}`);
    urls[build] = cluster.url.replace(/\/postgres$/, `/ab_${build}`);
    stores[build] = await openPgStore(distOf(build), urls[build], cluster.dir);
    // Entities exist before timing.
    for (let i = 0; i < 5; i++) await pgFlush(stores[build]!)();
  }
  const rates: Record<string, number[]> = Object.fromEntries(builds.map((build) => [build, []]));
  for (let round = 0; round < rounds; round++) {
    // Each round starts one build later: the box's load falls on every build alike.
    const order = builds.map((_, i) => builds[(i + round) % builds.length]!);
    for (const build of order) {
      const cpu = process.cpuUsage();
      const before = performance.now();
      rates[build]!.push(await rate(pgFlush(stores[build]!)));
      const used = process.cpuUsage(cpu);
      // This process's CPU per remember (the rule, the client library), beside the wall time.
      note(`  ${build}: ${((used.user + used.system) / (rates[build]!.at(-1)! * (performance.now() - before) / 1000)).toFixed(0)} µs CPU per remember in this process`);
    }
    note(`postgres round ${round + 1}: ${builds.map((build) => `${build} ${Math.round(rates[build]!.at(-1)!)}`).join(', ')} remembers/s`);
  }
  for (const build of builds) await stores[build]!.store.close();

  // Statements per flush: each build's new session logs every statement it sends.
  const FLUSHES = 10;
  await cluster.sql("ALTER SYSTEM SET log_line_prefix = '%d '");
  await cluster.sql('SELECT pg_reload_conf()');
  const perFlush: Record<string, number> = {};
  const serverMsPerFlush: Record<string, number> = {};
  const log = join(cluster.dir, 'data', 'server.log');
  for (const build of builds) {
    await cluster.sql(`ALTER DATABASE ab_${build} SET log_min_duration_statement = 0`);
    const opened = await openPgStore(distOf(build), urls[build]!, cluster.dir);
    // Steady state: the new store's entity cache filled first.
    for (let i = 0; i < 10; i++) await pgFlush(opened)();
    await cluster.sql("SELECT 'memrt-count-from'", `ab_${build}`);
    for (let i = 0; i < FLUSHES; i++) await pgFlush(opened)();
    await cluster.sql("SELECT 'memrt-count-to'", `ab_${build}`);
    await opened.store.close();
    await cluster.sql(`ALTER DATABASE ab_${build} RESET log_min_duration_statement`);
    const counts = loggedStatements(readFileSync(log, 'utf8'), `ab_${build}`, 'memrt-count-from', 'memrt-count-to');
    const entries = [...counts];
    perFlush[build] = entries.reduce((a, [, e]) => a + e.n, 0) / FLUSHES;
    serverMsPerFlush[build] = entries.reduce((a, [, e]) => a + e.ms, 0) / FLUSHES;
    const commonest = entries.sort((a, b) => b[1].ms - a[1].ms).slice(0, 10)
      .map(([shape, e]) => `  ${(e.n / FLUSHES).toFixed(1).padStart(6)} ×  ${(e.ms / FLUSHES).toFixed(2).padStart(7)} ms  ${shape}`);
    note(`postgres ${build}: ${perFlush[build]!.toFixed(1)} statements, ${serverMsPerFlush[build]!.toFixed(1)} ms in the server per flush of ${IN_FLIGHT}; by server time:\n${commonest.join('\n')}`);
  }
  return builds.slice(1).flatMap((build) => [
    [`PostgreSQL: remember via adapter, this build vs ${distOf(build)} (one cluster, median of ${rounds})`,
      fmt.int(median(rates.current!)), fmt.int(median(rates[build]!)), fmt.pct(median(rates.current!) / median(rates[build]!))],
    [`PostgreSQL: statements per flush of ${IN_FLIGHT} remembers, this build vs ${distOf(build)}`,
      perFlush.current!.toFixed(1), perFlush[build]!.toFixed(1), fmt.pct(perFlush.current! / perFlush[build]!)],
    [`PostgreSQL: server ms per flush of ${IN_FLIGHT} remembers, this build vs ${distOf(build)}`,
      serverMsPerFlush.current!.toFixed(1), serverMsPerFlush[build]!.toFixed(1), fmt.pct(serverMsPerFlush.current! / serverMsPerFlush[build]!)],
  ]);
}

async function postgresRates(): Promise<(string | number)[][]> {
  // test/support starts private clusters the way CI does; the bench reuses it.
  const { postgresUnavailable, startPrimary } = await import('../test/support/postgres.js');
  const { openPostgresWriteStore } = await import('../src/writer/postgres/adapter.js');
  const unavailable = postgresUnavailable();
  if (unavailable) {
    note(`PostgreSQL skipped: ${unavailable}`);
    return [];
  }
  const cluster = await startPrimary();
  try {
    const versus = baselineDists.length === 0 ? [] : await postgresAgainstBaselines(cluster, baselineDists);
    await cluster.sql('CREATE DATABASE bench');
    const url = cluster.url.replace(/\/postgres$/, '/bench');
    const config = loadConfig({ SERVICE_PATH: join(cluster.dir, 'unused.db') });
    const nodeA = await openPostgresWriteStore(url, config);
    const nodeB = await openPostgresWriteStore(url, config);
    const flush = (store: typeof nodeA) => async () => {
      const { replies } = await store.runBatch(Array.from({ length: IN_FLIGHT }, (_, id) => ({ id, namespace: config.namespace, command: remember() })));
      if (!replies.every((r) => r.ok)) throw new Error('a remember failed');
      return IN_FLIGHT;
    };
    // Entities exist before timing, as in the SQLite raw baseline.
    for (let i = 0; i < 5; i++) await flush(nodeA)();
    const one = await rate(flush(nodeA));
    note(`postgres adapter, one node: ${Math.round(one)} remembers/s`);
    const two = (await Promise.all([rate(flush(nodeA)), rate(flush(nodeB))])).reduce((a, b) => a + b, 0);
    note(`postgres adapter, two nodes: ${Math.round(two)} remembers/s`);
    await nodeA.close();
    await nodeB.close();

    const sql = connectReader(url, { max: 1 });
    const raw = await rawWriter(sql, corpus);
    const perStatement = await rate(() => raw.perStatement(IN_FLIGHT));
    const multiRow = await rate(() => raw.multiRow(IN_FLIGHT));
    await sql.end();
    note(`raw postgres: ${Math.round(perStatement)} rows/s statement by statement, ${Math.round(multiRow)} multi-row`);
    return [
      ...versus,
      ['PostgreSQL: remember via adapter (1 node) vs raw 64-row txns, per statement', fmt.int(one), fmt.int(perStatement), fmt.pct(one / perStatement)],
      ['PostgreSQL: remember via adapter (1 node) vs raw 64-row txns, multi-row INSERT', fmt.int(one), fmt.int(multiRow), fmt.pct(one / multiRow)],
      ['PostgreSQL: remember via adapter, 2 nodes on one namespace (total) vs 1 node', fmt.int(two), fmt.int(one), fmt.pct(two / one)],
    ];
  } finally {
    await cluster.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'memrt-bench-writes-'));
try {
  const rows = process.argv.includes('--postgres-only') ? [] : await sqlite(dir);
  if (process.argv.some((a) => a.startsWith('--postgres'))) rows.push(...await postgresRates());
  console.log(table(`Write rate through the store port (${seconds} s per phase, 64 commands per flush)`, ['figure', 'rows/s', 'baseline rows/s', 'ratio'], rows));
  for (const file of writeResults('writes', { machine: machine(), settings: { seconds, inFlight: IN_FLIGHT }, rows })) note(`wrote ${file}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
