// `npm run bench:explain -- --baseline-dist <dir>`: what recall's `explain` costs (and, with an
// older build as the baseline, what any change to the engine costs). The recall
// engine of this build with explain off (the default path) against the same engine of another
// build (one without explain: `git archive main | tar -x -C <dir>` and build it there), and
// with explain on, on one seeded database (hash-256 vectors), the same 64 queries, query vector
// given, the three called in turn (see below).
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/shared/db.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { Corpus } from './lib/corpus.js';
import { entityCountFor, seedDatabase } from './lib/seed.js';
import { fmt, table } from './lib/report.js';

const at = process.argv.indexOf('--baseline-dist');
if (at < 0 || !process.argv[at + 1]) throw new Error('usage: node dist/bench/explain-cost.js --baseline-dist <other build\'s dist folder>');
const baselineDist = process.argv[at + 1];
const memories = Number(process.env.BENCH_MEMORIES ?? '10000');
const WARMUP = 100;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? '1500');
const QUERIES = 64;

const dir = mkdtempSync(join(tmpdir(), 'explain-cost-'));
try {
  const path = join(dir, 'bench.db');
  await seedDatabase({ path, memories, embedder: { id: 'hash-256', dimensions: 256 }, label: '(hash-256, explain cost)' });
  const db = openDatabase(path, { readonly: true });
  const corpus = new Corpus(42, entityCountFor(memories));
  for (let i = 0; i < 1000; i++) corpus.next();
  const queries = Array.from({ length: QUERIES }, () => corpus.query());
  const vectors = await new HashingEmbedder(256).embed(queries);

  const other = (module: string) => import(pathToFileURL(join(baselineDist, 'src', module)).href);
  const baseline = await baselineEngine(other, db);
  const engine = new RecallEngine(new SqliteReadPort(db, 1, 'default', { minSimilarity: 0.2 }));

  const request = (i: number, explain?: boolean) => ({
    query: queries[i % QUERIES], entity: null, types: null, limit: 10, queryVector: vectors[i % QUERIES], ...(explain ? { explain } : {}),
  });
  const counters = { baseline: 0, off: 0, on: 0 };
  const tasks: Record<string, () => Promise<unknown> | unknown> = {
    'baseline build (no explain)': () => baseline.recall(request(counters.baseline++)),
    'this build, explain off (default)': () => engine.recall(request(counters.off++)),
    'this build, explain on': () => engine.recall(request(counters.on++, true)),
  };
  const names = Object.keys(tasks);
  // Call by call, the three in turn (rotating who goes first): on this shared 2-core machine
  // load changes within a second, and tinybench's back-to-back blocks put each change on one
  // engine (a first run in blocks gave explain *off* 1.48× and *on* 1.13× the baseline).
  const times = new Map(names.map((name) => [name, [] as number[]]));
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length];
      const started = performance.now();
      await tasks[name]();
      if (i >= WARMUP) times.get(name)!.push(performance.now() - started);
    }
  }
  const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(values.length * q)];
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const base = quantile(times.get(names[0])!, 0.5);
  console.log(table(`Recall engine, limit 10, ${memories.toLocaleString('en')} memories, query vector given — ${SAMPLES} calls each, interleaved (µs)`,
    ['engine', 'p50 µs', 'p90 µs', 'p99 µs', 'mean µs', 'p50 ÷ baseline'],
    names.map((name) => {
      const t = times.get(name)!;
      return [name, fmt.us(quantile(t, 0.5)), fmt.us(quantile(t, 0.9)), fmt.us(quantile(t, 0.99)), fmt.us(mean(t)), fmt.ratio(quantile(t, 0.5) / base)];
    })));
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The other build's engine over the same file: one from before the read port (issue 16) took
 * the database, a ReadStore and an EntityMatcher and answered synchronously; later ones take
 * the SQLite read port.
 */
async function baselineEngine(other: (module: string) => Promise<Record<string, any>>, db: unknown): Promise<{ recall(request: unknown): unknown }> {
  const { RecallEngine: Engine } = await other('workers/recall/engine.js');
  const port = await other('workers/sqlite/read-port.js').catch(() => other('workers/sqlite-read-port.js')).catch(() => null);
  if (port) return new Engine(new port.SqliteReadPort(db, 1, 'default', { minSimilarity: 0.2 }));
  const [{ ReadStore }, { EntityMatcher }] = await Promise.all([other('workers/read-store.js'), other('workers/entity-mentions.js')]);
  return new Engine(db, new ReadStore(db, 1, 'default'), new EntityMatcher(db, 1), { minSimilarity: 0.2 });
}
