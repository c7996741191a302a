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
// Environment: BENCH_SECONDS (per phase, default 5).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
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

async function sqlite(dir: string): Promise<(string | number)[][]> {
  const config = loadConfig({ SERVICE_PATH: join(dir, 'memory.db') });
  const writer = await WriterClient.start(config);
  // 64 clients, each sending its next remember as soon as the last was acknowledged.
  const service = await rate(async () => {
    await Promise.all(Array.from({ length: IN_FLIGHT }, () => writer.send(config.namespace, remember())));
    return IN_FLIGHT;
  });
  await writer.close();
  note(`sqlite writer thread: ${Math.round(service)} remembers/s`);
  const [raw] = measureInsertLimits(config.dbPath, 10_000, seconds, [IN_FLIGHT]);
  return [['SQLite: remember via writer thread vs raw 64-row txns', fmt.int(service), fmt.int(raw!.rowsPerSecond), fmt.pct(service / raw!.rowsPerSecond)]];
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
