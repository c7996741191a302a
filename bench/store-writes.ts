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
// With `--baseline-dist <other build's dist>`, the SQLite phase runs that build's writer thread
// too, the two alternating phase by phase (BENCH_ROUNDS each, default 3) on files of their own,
// and the table gives each build's rate (median of its phases) and the ratio.
// Environment: BENCH_SECONDS (per phase, default 5).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
const at = process.argv.indexOf('--baseline-dist');
const baselineDist = at >= 0 ? process.argv[at + 1] : undefined;
if (at >= 0 && !baselineDist) throw new Error("usage: node dist/bench/store-writes.js [--postgres] [--baseline-dist <other build's dist folder>]");
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
  const rows = await sqlite(dir);
  if (process.argv.includes('--postgres')) rows.push(...await postgresRates());
  console.log(table(`Write rate through the store port (${seconds} s per phase, 64 commands per flush)`, ['figure', 'rows/s', 'baseline rows/s', 'ratio'], rows));
  for (const file of writeResults('writes', { machine: machine(), settings: { seconds, inFlight: IN_FLIGHT }, rows })) note(`wrote ${file}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
