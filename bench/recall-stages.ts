// `node dist/bench/recall-stages.js <file.db>`: where one recall's time goes, stage by stage, in
// process on a seeded file (bench:scale keeps its files with BENCH_SCALE_KEEP), read-only: the
// recall engine the pool threads run, over the file, with the namespace's shared codes and
// without them (vec0), the two variants alternating query by query. Per stage: mean CPU ms (see
// below), and per recall.
// Environment: BENCH_QUERIES (default 60), BENCH_SEED (default 42), BENCH_LIMIT (default 5, as
// bench:scale's recall).
import { openDatabase } from '../src/shared/db.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { VectorCells } from '../src/workers/sqlite/ivf-cells.js';
import { refreshVectorCodes } from '../src/workers/sqlite/vector-codes.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import type { ReadPort } from '../src/workers/port/read-port.js';
import type { SharedCodesHandle } from '../src/shared/protocol/pool.js';
import { Corpus } from './lib/corpus.js';
import { entityCountFor } from './lib/seed.js';
import { machine } from './lib/report.js';

// Stage times in CPU ms: the engine times its stages with performance.now(), so here that clock
// is the process's CPU time (this process runs one thread of work): on a loaded box wall time
// holds the waits for a core, CPU time does not. BENCH_WALL=1 keeps the wall clock.
if (process.env.BENCH_WALL !== '1') {
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  Object.defineProperty(performance, 'now', { value: cpuMs, configurable: true });
}
const path = process.argv[2];
if (!path) throw new Error('usage: node dist/bench/recall-stages.js <file.db>');
const QUERIES = Number(process.env.BENCH_QUERIES ?? 60);
const SEED = Number(process.env.BENCH_SEED ?? 42);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 5);
const WARM = 5;

const db = openDatabase(path, { readonly: true });
const namespace = db.prepare('SELECT name FROM namespaces WHERE id = 1').pluck().get() as string;
const memories = db.prepare('SELECT count(*) FROM memories WHERE embedded = 1').pluck().get() as number;
const cells = new VectorCells(db, 1);
const dimensions = cells.current()[0]?.centroids.dimensions ?? 256;
const info = machine();
console.log(`recall stages — ${info.date}, ${path}: ${memories.toLocaleString('en')} memories, ${dimensions}-d, ${QUERIES} queries, limit ${LIMIT}, load ${info.loadAverageAtStart.join(' ')}`);

const stores = new Map<string, SharedCodesHandle | null>([['vec0 (no codes)', null]]);
{
  const t = performance.now();
  const built = refreshVectorCodes(db, 1, cells, null, 2 ** 40, 0);
  stores.set('codes: int8 scan', built.handle);
  console.log(`store: ${(built.bytes / 2 ** 20).toFixed(0)} MiB, built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

let current: Record<string, number> = {};
const port = new SqliteReadPort(db, 1, namespace, { minSimilarity: 0.2, vectorCodes: true });
// The engine's `vector` stage also holds the cosine look-ups of fused candidates: timed apart here.
const timedPort = new Proxy(port, {
  get(target, key, receiver) {
    const value = Reflect.get(target, key, receiver);
    if (key !== 'snapshot') return typeof value === 'function' ? value.bind(target) : value;
    const snapshot = target.snapshot.bind(target) as (work: (reads: object) => Promise<unknown>, options: unknown) => Promise<unknown>;
    return (work: (reads: unknown) => Promise<unknown>, options: unknown) => snapshot((reads) => work(new Proxy(reads, {
      get(r, k) {
        const v = Reflect.get(r, k);
        if (k !== 'similarities') return typeof v === 'function' ? v.bind(r) : v;
        return async (...args: unknown[]) => {
          const t = performance.now();
          try { return await (v as (...a: unknown[]) => Promise<unknown>).apply(r, args); } finally { current.similarities = (current.similarities ?? 0) + performance.now() - t; }
        };
      },
    })), options);
  },
}) as unknown as ReadPort;
const engine = new RecallEngine(timedPort);

const corpus = new Corpus(SEED, entityCountFor(memories));
for (let i = 0; i < 2000; i++) corpus.next();
const hasher = new HashingEmbedder(dimensions);
const sums = new Map<string, Record<string, number>>([...stores.keys()].map((k) => [k, {}]));
const totals = new Map<string, number[]>([...stores.keys()].map((k) => [k, []]));
const cpu = new Map<string, number[]>([...stores.keys()].map((k) => [k, []]));
let embedMs = 0;
for (let q = 0; q < QUERIES + WARM; q++) {
  const query = corpus.query();
  const t = performance.now();
  const [queryVector] = await hasher.embed([query]);
  if (q >= WARM) embedMs += performance.now() - t;
  const names = [...stores.keys()];
  // Alternate which variant runs first.
  const order = q % 2 === 0 ? names : [...names].reverse();
  for (const name of order) {
    current = {};
    const started = performance.now();
    const cpuAt = process.cpuUsage();
    await engine.recall({ query, entity: null, types: null, limit: LIMIT, queryVector, vectorCodes: { handle: stores.get(name)! } }, Date.now(), current);
    const used = process.cpuUsage(cpuAt);
    if (q < WARM) continue;
    totals.get(name)!.push(performance.now() - started);
    cpu.get(name)!.push((used.user + used.system) / 1000);
    const sum = sums.get(name)!;
    for (const [stage, ms] of Object.entries(current)) sum[stage] = (sum[stage] ?? 0) + ms / QUERIES;
  }
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`query embedding (hash-${dimensions}): ${(embedMs / QUERIES).toFixed(3)} ms`);
// `strength` is inside `fusion`; `vector other` is the rest of the engine's `vector` stage (vec0's KNN SQL without codes, the feedback vectors).
const stageNames = ['bm25', 'vector_probe', 'vector_codes', 'vector_rerank', 'similarities', 'vector other', 'graph', 'fusion', 'strength', 'hydrate'];
console.log(`| variant | recall mean / p50 ms | CPU ms mean | ${stageNames.join(' | ')} |`);
console.log(`|---|---|---|${stageNames.map(() => '---').join('|')}|`);
for (const name of stores.keys()) {
  const s = sums.get(name)!;
  const nested = (s.vector_probe ?? 0) + (s.vector_codes ?? 0) + (s.vector_rerank ?? 0);
  // `vector` wraps both the KNN (nearest) and the look-ups; the rest of it is the KNN's own SQL and the feedback vectors.
  const rest = (s.vector ?? 0) - nested - (s.similarities ?? 0);
  const row: Record<string, number> = { ...s, 'vector other': rest };
  console.log(`| ${name} | ${mean(totals.get(name)!).toFixed(2)} / ${p50(totals.get(name)!).toFixed(2)} | ${mean(cpu.get(name)!).toFixed(2)} | ${stageNames.map((k) => (row[k] ?? 0).toFixed(2)).join(' | ')} |`);
}
db.close();
