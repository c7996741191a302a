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
import postgres from 'postgres';
import { loadConfig } from '../src/shared/config.js';
import { INITIAL_DIFFICULTY, initialStability } from '../src/shared/fsrs.js';
import type { WriterCommand } from '../src/shared/messages.js';
import { contentKey } from '../src/shared/text.js';
import { WriterClient } from '../src/core/writer-client.js';
import { measureInsertLimits } from './limits.js';
import { Corpus } from './lib/corpus.js';
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
    await Promise.all(Array.from({ length: IN_FLIGHT }, () => writer.send(remember())));
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
      const { replies } = await store.runBatch(Array.from({ length: IN_FLIGHT }, (_, id) => ({ id, command: remember() })));
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

    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const [{ ns }] = await sql<{ ns: number }[]>`SELECT id AS ns FROM namespaces LIMIT 1` as unknown as [{ ns: number }];
    const owners = await sql<{ id: string; name: string }[]>`SELECT id, name FROM entities LIMIT 200`;
    const row = () => {
      const owner = owners[Math.floor(corpus.next() * owners.length)]!;
      const fact = `${corpus.fact(owner.name)} (raw ${randomUUID().slice(0, 8)})`;
      return { id: randomUUID(), fact, key: contentKey(fact), owner: owner.id, now: Date.now() };
    };
    const stability = initialStability('semantic', 0.9);
    const perStatement = await rate(async () => {
      await sql.begin(async (tx) => {
        for (let i = 0; i < IN_FLIGHT; i++) {
          const r = row();
          const [m] = await tx<{ rowid: string }[]>`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence,
            stability, difficulty, last_access_at, created_at, extraction_tier, entity_id)
            VALUES (${r.id}, ${ns}, 'semantic', ${r.fact}, ${r.key}, 0.9, ${stability}, ${INITIAL_DIFFICULTY}, ${r.now}, ${r.now}, 1, ${r.owner}) RETURNING rowid`;
          await tx`INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (${m!.rowid}, ${r.owner}, 'owner')`;
        }
      });
      return IN_FLIGHT;
    });
    const multiRow = await rate(async () => {
      const rows = Array.from({ length: IN_FLIGHT }, row);
      await sql.begin(async (tx) => {
        await tx`WITH m AS (INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence,
            stability, difficulty, last_access_at, created_at, extraction_tier, entity_id)
          SELECT id, ${ns}, 'semantic', fact, key, 0.9, ${stability}, ${INITIAL_DIFFICULTY}, ${Date.now()}, ${Date.now()}, 1, owner
          FROM unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.fact)}::text[], ${rows.map((r) => r.key)}::text[], ${rows.map((r) => r.owner)}::text[]) AS u(id, fact, key, owner)
          RETURNING rowid, entity_id)
          INSERT INTO memory_entities (memory_rowid, entity_id, relation) SELECT rowid, entity_id, 'owner' FROM m`;
      });
      return IN_FLIGHT;
    });
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
