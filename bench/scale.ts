// `npm run bench:scale`: recall latency, database size and server memory as the store grows.
// Each size is seeded directly with better-sqlite3 (bypassing HTTP; see lib/seed.ts), raw
// FTS/KNN times are taken on the file, then the service is started on it and recall is
// measured over HTTP with the query embedded by the service.
// Flags: --1m adds 1,000,000 memories (seeding takes minutes); --postgres also measures the
// largest hash-256 size on PostgreSQL through two nodes (bench/scale-postgres.ts), and the SQLite
// node's write rate beside it; --quick is a smoke run (10,000 memories, 3 s phases, no USE-lite).
// Environment: BENCH_SECONDS (per phase, default 10), BENCH_SCALE_SIZES (e.g. 10000,100000),
// BENCH_USE=0 (skip the USE-lite runs), BENCH_HASH_SIZES (sizes also run with hash-256, default all; empty: none), BENCH_USE_SIZES (sizes also run with USE-lite, default 100000;
// seeded with 512-d hashing stand-ins, so 1000000 is as cheap to seed as hash-256 at twice the file), BENCH_CPU_PROF=<dir>, BENCH_BASELINE_MAIN=<other
// build>/dist/src/main.js (that build's service measured on the same file after this one's),
// BENCH_SCALE_KEEP=<dir> (seeded files kept there and reused by the next run: 1M takes minutes to seed),
// BENCH_CODES_OFF=0 (skip this build's second service run with SERVICE_VECTOR_CODES_MB=0), and
// SERVICE_VECTOR_CODES_MB passes through to this build's first run (unset: the build's default budget).
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { migrate } from '../src/writer/sqlite/migrate.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { VectorCells } from '../src/workers/sqlite/ivf-cells.js';
import { refreshVectorCodes } from '../src/workers/sqlite/vector-codes.js';
import { CodesReader } from '../src/workers/ivf/vector-codes.js';
import { probedCells } from '../src/workers/ivf/cells.js';
import { cellCountFor, codeProbeCountFor, probeCountFor } from '../src/workers/ivf/kmeans.js';
import { blobOf } from '../src/shared/meta.js';
import { DEFAULT_VECTOR_INDEX_MIN } from '../src/shared/config.js';
import { queryTerms } from '../src/workers/recall/query-text.js';
import { ftsMatchExpression } from '../src/workers/sqlite/fts-match.js';
import { Corpus } from './lib/corpus.js';
import { runLoad, summarise, type LatencySummary, type LoadResult } from './lib/load.js';
import { note } from './lib/progress.js';
import { startService } from './lib/processes.js';
import { fmt, machine, table, writeResults } from './lib/report.js';
import { Scenarios } from './lib/scenarios.js';
import { entityCountFor, seedDatabase, type SeedResult } from './lib/seed.js';
import { renderCharts } from './lib/svg.js';
import { writeScript, wrkAvailable } from './lib/wrk.js';
import { rememberBodies, rememberStream, type WriteStreamResult } from './lib/write-stream.js';
import { measureInsertLimits, type InsertLimit } from './limits.js';
import { measurePostgres, postgresReport, type PostgresScale } from './scale-postgres.js';

const env = (name: string, fallback: string) => process.env[name]?.trim() || fallback;
const quick = process.argv.includes('--quick');
const withPostgres = process.argv.includes('--postgres');
const seconds = Number(env('BENCH_SECONDS', quick ? '3' : '10'));
const sizes = env('BENCH_SCALE_SIZES', quick ? '10000' : '10000,100000').split(',').map(Number);
if (process.argv.includes('--1m') && !sizes.includes(1_000_000)) sizes.push(1_000_000);
const hashAt = process.env.BENCH_HASH_SIZES === undefined ? sizes : process.env.BENCH_HASH_SIZES.split(',').filter((n) => n.trim() !== '').map(Number);
const useAt = env('BENCH_USE', quick ? '0' : '1') === '0' ? [] : env('BENCH_USE_SIZES', '100000').split(',').map(Number).filter((n) => sizes.includes(n));
/** The size measured on PostgreSQL too (the largest; 1M would take far past the run's budget to copy). */
const postgresAt = withPostgres ? Math.max(...sizes.filter((n) => n < 1_000_000)) : null;
const baselineMain = process.env.BENCH_BASELINE_MAIN?.trim() || null;
const keepDir = process.env.BENCH_SCALE_KEEP?.trim() || null;
const SEED = 42;
const RAW_QUERIES = 30;
const DEPTH = 50;

interface RawTimes {
  knnMs: LatencySummary;
  /** The same KNN restricted to the IVF cells the service would probe (null: no index at this size). */
  ivfKnnMs: LatencySummary | null;
  /** Share of the exact 50 nearest neighbours the IVF probe also returns (null: no index). */
  ivfRecall: number | null;
  ftsMs: LatencySummary;
  /** The in-memory codes the pool threads scan instead (null: no index at this size). */
  codes: CodeTimes | null;
  /** Per query: the KNN the service runs (IVF when indexed, else exact) + FTS, as one recall's raw reads. */
  recallShapedMs: LatencySummary;
  hashEmbedMs: LatencySummary;
  /** IVF recall and KNN time (mean ms) at other probe counts: what SERVICE_VECTOR_INDEX_PROBES trades. */
  probeSweep: { probes: number; recall: number; ms: number }[];
}

/** Probe counts the scale bench tries beside the service's default. */
const PROBE_SWEEP = [4, 8, 15, 25, 40, 60];
/** Shares of the cells the codes sweep scans. */
const CODE_SHARE_SWEEP = [0.1, 0.15, 0.2, 0.3];

interface CodeTimes {
  /** Building one namespace's shared codes (read from vec0's chunks, encoded; a background task in the service). */
  loadMs: number;
  /** What one pool thread holds for them. */
  mb: number;
  probes: number;
  /** Probe + scan + exact re-rank of the shortlist, as VectorSignal runs them. */
  knnMs: LatencySummary;
  recall: number;
  sweep: { probes: number; recall: number; ms: number }[];
}

interface ScaleRow {
  memories: number;
  embedder: string;
  vectors: string;
  seed: SeedResult;
  dbMb: number;
  raw: RawTimes;
  recall1: LoadResult;
  recall8: LoadResult;
  /** Until the service said it listens (its pool threads warmed up, codes loaded). */
  startMs: number;
  /** BENCH_BASELINE_MAIN's service on the same file, measured the same way after this one. */
  baseline?: ServiceFigures;
  /** This build again with the vector codes off (SERVICE_VECTOR_CODES_MB=0), after the first run. */
  codesOff?: ServiceFigures;
  /** After the service listened, until its shared vector codes were built (null: none within the wait, or not indexed). */
  codesReadyMs: number | null;
  codesMb: number;
  /** The service said the codes alone need more than its budget (vector_codes_too_large_namespaces): the "on" run recalled through vec0. */
  codesTooLarge?: boolean;
  rssMb: number;
  peakRssMb: number;
  rssAnonMb: number;
  rssFileMb: number;
  pssMb: number;
  /** --postgres, at its size: remember streamed over HTTP to this one SQLite node, and the raw insert rate. */
  writes?: { stream: WriteStreamResult; raw: InsertLimit };
}

interface ServiceFigures {
  recall1: LoadResult;
  recall8: LoadResult;
  startMs: number;
  peakRssMb: number;
  pssMb: number;
  rssAnonMb: number;
}

/** The share of the exact top `DEPTH` a shortlist re-ranked exactly keeps, and its cost. */
function codeTimes(db: ReturnType<typeof openDatabase>, cells: VectorCells): (vector: Float32Array, exact: { rowid: number }[], record: boolean) => void {
  const rerank = db.prepare<[Buffer, string, number], { rowid: number }>(`SELECT rowid FROM (
      SELECT v.rowid AS rowid, vec_distance_cosine(v.embedding, ?) AS d FROM json_each(?) j CROSS JOIN memory_vectors v ON v.rowid = j.value)
    ORDER BY d LIMIT ?`);
  let t = performance.now();
  const built = refreshVectorCodes(db, 1, cells, null, 2 ** 40, 0);
  const codes = built.handle ? CodesReader.attach(built.handle) : null;
  loadMs = performance.now() - t;
  codesMb = codes ? built.bytes / 2 ** 20 : 0;
  const count = cells.current().at(-1)?.centroids.count ?? 0;
  const search = (vector: Float32Array, probes: number) =>
    rerank.all(blobOf(vector), JSON.stringify(codes!.nearest(vector, probedCells(cells.current(), vector, probes), Math.max(60, Math.ceil(1.2 * DEPTH)))?.rowids ?? []), DEPTH);
  return (vector, exact, record) => {
    if (!codes) return;
    t = performance.now();
    const found = search(vector, codeProbeCountFor(count));
    if (record) {
      codeMs.push(performance.now() - t);
      codeRecalls.push(overlapOf(exact, found));
    }
    for (const share of CODE_SHARE_SWEEP) {
      const probes = Math.max(1, Math.ceil(count * share));
      const point = codeSweep.get(probes) ?? { probes, recall: 0, ms: 0 };
      codeSweep.set(probes, point);
      t = performance.now();
      const swept = search(vector, probes);
      if (!record) continue;
      point.ms += (performance.now() - t) / RAW_QUERIES;
      point.recall += overlapOf(exact, swept) / RAW_QUERIES;
    }
  };
}
let loadMs = 0;
let codesMb = 0;
const codeMs: number[] = [];
const codeRecalls: number[] = [];
const codeSweep = new Map<number, { probes: number; recall: number; ms: number }>();
const overlapOf = (exact: { rowid: number }[], found: { rowid: number }[]) => {
  const ids = new Set(found.map((row) => row.rowid));
  return exact.length === 0 ? 1 : exact.filter((row) => ids.has(row.rowid)).length / exact.length;
};

function rawTimes(dbPath: string, memories: number, dimensions: number): Promise<RawTimes> {
  const db = openDatabase(dbPath, { readonly: true });
  const corpus = new Corpus(SEED, entityCountFor(memories));
  for (let i = 0; i < 2000; i++) corpus.next();
  const hasher = new HashingEmbedder(dimensions);
  const knn = db.prepare<[Buffer, number], { rowid: number }>('SELECT rowid, distance FROM memory_vectors WHERE embedding MATCH ? AND k = ?');
  const ivfKnn = db.prepare<[Buffer, number, string, number], { rowid: number }>(`WITH per_cell AS MATERIALIZED (
      SELECT rowid, distance FROM memory_vectors WHERE embedding MATCH ? AND k = ? AND cell IN (SELECT value FROM json_each(?)))
    SELECT rowid, distance FROM per_cell ORDER BY distance LIMIT ?`);
  const cells = new VectorCells(db, 1);
  const indexed = cells.current().length > 0;
  const sweep = PROBE_SWEEP.map((probes) => ({ probes, cells: new VectorCells(db, 1, probes), recall: 0, ms: 0 }));
  const overlap = overlapOf;
  codeMs.length = 0;
  codeRecalls.length = 0;
  codeSweep.clear();
  const codesFor = indexed ? codeTimes(db, cells) : null;
  const fts = db.prepare('SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?');
  const [knnMs, ivfMs, ftsMs, embedMs, recalls, shapedMs]: number[][] = [[], [], [], [], [], []];
  return (async () => {
    try {
      for (let i = 0; i < RAW_QUERIES + 3; i++) {
        const query = corpus.query();
        let t = performance.now();
        const [vector] = await hasher.embed([query]);
        const embedTime = performance.now() - t;
        t = performance.now();
        const exact = knn.all(blobOf(vector), DEPTH);
        const knnTime = performance.now() - t;
        let ivfTime = NaN;
        if (indexed && i >= 3) {
          t = performance.now();
          const probed = ivfKnn.all(blobOf(vector), DEPTH, JSON.stringify(cells.probe(vector)), DEPTH);
          ivfTime = performance.now() - t;
          ivfMs.push(ivfTime);
          recalls.push(overlap(exact, probed));
          for (const point of sweep) {
            t = performance.now();
            const found = ivfKnn.all(blobOf(vector), DEPTH, JSON.stringify(point.cells.probe(vector)), DEPTH);
            point.ms += (performance.now() - t) / RAW_QUERIES;
            point.recall += overlap(exact, found) / RAW_QUERIES;
          }
        }
        if (indexed) codesFor!(vector, exact, i >= 3);
        t = performance.now();
        fts.all(ftsMatchExpression(queryTerms(query)) ?? '"x"', DEPTH);
        const ftsTime = performance.now() - t;
        // The first few warm the page cache, as the service's warm-up does.
        if (i >= 3) {
          embedMs.push(embedTime);
          knnMs.push(knnTime);
          ftsMs.push(ftsTime);
          shapedMs.push((indexed ? ivfTime : knnTime) + ftsTime);
        }
      }
      const s = (v: number[]) => summarise(Float64Array.from(v));
      return {
        knnMs: s(knnMs), ftsMs: s(ftsMs), hashEmbedMs: s(embedMs), recallShapedMs: s(shapedMs),
        ivfKnnMs: indexed ? s(ivfMs) : null,
        ivfRecall: indexed ? recalls.reduce((a, b) => a + b, 0) / recalls.length : null,
        probeSweep: indexed ? sweep.map(({ probes, recall, ms }) => ({ probes, recall, ms })) : [],
        codes: indexed && codesMb > 0 ? {
          loadMs, mb: codesMb, probes: codeProbeCountFor(cellCountFor(memories)), knnMs: s(codeMs),
          recall: codeRecalls.reduce((a, b) => a + b, 0) / codeRecalls.length, sweep: [...codeSweep.values()],
        } : null,
      };
    } finally {
      db.close();
    }
  })();
}

function fileMb(path: string): number {
  let bytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      bytes += statSync(path + suffix).size;
    } catch {
      // no WAL file
    }
  }
  return bytes / 2 ** 20;
}

async function measureSize(workDir: string, memories: number, embedder: 'hash' | 'use'): Promise<ScaleRow> {
  const identity = embedder === 'hash' ? { id: 'hash-256', dimensions: 256 } : { id: 'use-lite-512', dimensions: 512 };
  const dbPath = join(keepDir ?? workDir, `scale-${embedder}-${memories}.db`);
  const reused = keepDir !== null && existsSync(dbPath);
  if (reused) {
    note(`reusing ${dbPath} (seeded by an earlier run)`);
    // Kept by an older build: brought to this build's schema before the raw reads (the service would do it only later).
    const db = openDatabase(dbPath, { readonly: false });
    try { migrate(db); } finally { db.close(); }
  }
  const seed = reused
    ? { memories, entities: entityCountFor(memories), episodes: NaN, seconds: NaN }
    : await seedDatabase({ path: dbPath, memories, embedder: identity, seed: SEED, label: `(${identity.id})` });
  const dbMb = fileMb(dbPath);
  if (embedder === 'hash' && memories === postgresAt) {
    postgres = await measurePostgres({ sqlitePath: dbPath, memories, seconds, seed: SEED, workDir, script: wrkScript(workDir), rawQueries: RAW_QUERIES * (quick ? 2 : 7) });
  }
  const raw = await rawTimes(dbPath, memories, identity.dimensions);
  note(`raw at ${memories.toLocaleString('en')}: exact KNN p50 ${raw.knnMs.p50.toFixed(2)} ms` +
    (raw.ivfKnnMs ? `, IVF KNN p50 ${raw.ivfKnnMs.p50.toFixed(2)} ms (recall@${DEPTH} ${(100 * raw.ivfRecall!).toFixed(1)}%)` : '') +
    `, FTS p50 ${raw.ftsMs.p50.toFixed(2)} ms`);
  const startedAt = performance.now();
  // This build's first run: its default codes budget, or SERVICE_VECTOR_CODES_MB (passed through).
  const service = await startService({ dbPath, embedder, dimensions: embedder === 'hash' ? 256 : undefined, cpuProfDir: process.env.BENCH_CPU_PROF });
  const startMs = performance.now() - startedAt;
  // The codes are built in the background after the service listens: recall scans vec0 until
  // they are there, so the phases wait for them (an indexed size only).
  const codesReady = memories >= DEFAULT_VECTOR_INDEX_MIN ? await codesBuilt(service.base, 600_000) : null;
  if (codesReady?.tooLarge) note(`codes larger than the budget (${(codesReady.ms / 1000).toFixed(1)} s after listening): the "on" run recalls through vec0`);
  else if (codesReady) note(`codes built ${(codesReady.ms / 1000).toFixed(1)} s after listening (${codesReady.mb.toFixed(0)} MiB)`);
  const label = `recall @${memories.toLocaleString('en')} [${embedder}]`;
  const phases = async (url: string) => {
    const scenarios = new Scenarios(SEED, entityCountFor(memories));
    const recall1 = await runLoad({ title: label, url, connections: 1, seconds, warmupSeconds: 2, requests: [scenarios.recall()] });
    const recall8 = await runLoad({ title: label, url, connections: 8, seconds, warmupSeconds: 1, requests: [scenarios.recall()] });
    return { recall1, recall8 };
  };
  let baseline: ServiceFigures | undefined;
  try {
    const url = service.base;
    const { recall1, recall8 } = await phases(url);
    const memory = service.memory();
    let writes: ScaleRow['writes'];
    if (embedder === 'hash' && memories === postgresAt) {
      // After the recall phases, so those stay figures of the size named.
      const bodies = rememberBodies(workDir, 'sqlite', 1, 8_000 * seconds, SEED, entityCountFor(memories));
      const stream = await rememberStream(wrkScript(workDir), 'remember via the SQLite node', [url], bodies, seconds);
      await service.stop();
      const [raw] = measureInsertLimits(dbPath, memories, seconds, [Math.max(1, Math.round(stream.meanBatch))]);
      writes = { stream, raw: raw! };
    }
    await service.stop();
    let codesOff: ServiceFigures | undefined;
    if (process.env.BENCH_CODES_OFF !== '0') {
      const at = performance.now();
      const off = await startService({ dbPath, embedder, dimensions: embedder === 'hash' ? 256 : undefined, env: { SERVICE_VECTOR_CODES_MB: '0' } });
      try {
        const startMs = performance.now() - at;
        const figures = await phases(off.base);
        const { peakRssMb, pssMb, rssAnonMb } = off.memory();
        codesOff = { ...figures, startMs, peakRssMb, pssMb, rssAnonMb };
      } finally {
        await off.stop();
      }
    }
    if (baselineMain) {
      const at = performance.now();
      const other = await startService({ dbPath, embedder, dimensions: embedder === 'hash' ? 256 : undefined, main: baselineMain });
      try {
        const startMs = performance.now() - at;
        // As for this build: the phases wait for the baseline's own codes (when it builds any), or
        // its recalls would be vec0's until then and the comparison that of two paths.
        if (memories >= DEFAULT_VECTOR_INDEX_MIN) await codesBuilt(other.base, 600_000);
        const figures = await phases(other.base);
        const { peakRssMb, pssMb, rssAnonMb } = other.memory();
        baseline = { ...figures, startMs, peakRssMb, pssMb, rssAnonMb };
      } finally {
        await other.stop();
      }
    }
    return {
      memories, embedder: identity.id,
      vectors: embedder === 'hash' ? 'hashing embedder' : '512-d stand-ins (hashing), query by USE-lite',
      seed, dbMb, raw, recall1, recall8, startMs, baseline, codesOff, codesReadyMs: codesReady && !codesReady.tooLarge ? codesReady.ms : null, codesMb: codesReady?.mb ?? 0,
      ...(codesReady?.tooLarge ? { codesTooLarge: true } : {}), ...memory, writes,
    };
  } finally {
    await service.stop();
    if (!keepDir) for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
  }
}

/**
 * Waits until the service's /metrics shows a namespace on the shared vector codes, or says they
 * are larger than its budget (`tooLarge`: they will not come); null after `timeoutMs`.
 */
async function codesBuilt(base: string, timeoutMs: number): Promise<{ ms: number; mb: number; tooLarge?: true } | null> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    const text = await (await fetch(`${base}/metrics`)).text();
    const gauge = (name: string) => Number(new RegExp(`^memory_runtime_${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    if (gauge('vector_codes_namespaces') > 0) return { ms: performance.now() - started, mb: gauge('vector_codes_bytes') / 2 ** 20 };
    if (gauge('vector_codes_too_large_namespaces') > 0) return { ms: performance.now() - started, mb: 0, tooLarge: true };
    if (gauge('vector_codes_limit_bytes') === 0) return null;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return null;
}

let postgres: PostgresScale | null = null;
/** The build measured: a figure names its commit. */
const commitOf = () => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
};
const wrkScript = (dir: string) => writeScript(dir);
if (withPostgres && !(await wrkAvailable())) throw new Error('bench:scale --postgres needs wrk (apt-get install wrk)');

const info = machine();
const workDir = mkdtempSync(join(tmpdir(), 'memrt-scale-'));
const rows: ScaleRow[] = [];
const started = performance.now();
try {
  for (const size of sizes) {
    // BENCH_HASH_SIZES=<sizes> narrows the hash-256 runs (e.g. "" with BENCH_USE_SIZES=1000000: USE-lite at 1M alone).
    if (hashAt.includes(size)) rows.push(await measureSize(workDir, size, 'hash'));
    if (useAt.includes(size)) rows.push(await measureSize(workDir, size, 'use'));
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}

const out: string[] = [];
out.push(`memory-runtime scale benchmark — ${info.date}, Node ${info.node}, ${info.cpus} × ${info.cpuModel}, load average at start ${info.loadAverageAtStart.join(' ')}`);
out.push('Indicative only. Memories were seeded directly with better-sqlite3 into a database prepared by the service migrations');
out.push('(seeding bypassed HTTP); recall is then measured over HTTP with the query embedded by the service.');
out.push(table(`Recall over HTTP by dataset size (autocannon, ${seconds} s per phase, limit 5, no entity filter)`,
  ['memories', 'embedder', 'c=1 p50', 'p90', 'p99', 'req/s', 'c=8 p50', 'p99', 'req/s', 'errors', 'exact KNN', 'IVF KNN', 'IVF recall', 'raw FTS', 'p50/raw', 'DB MiB', 'peak RSS', 'PSS', 'anon', 'seed s'],
  rows.map((r) => [
    fmt.int(r.memories), r.embedder, fmt.ms(r.recall1.latencyMs.p50), fmt.ms(r.recall1.latencyMs.p90), fmt.ms(r.recall1.latencyMs.p99), fmt.rate(r.recall1.rps),
    fmt.ms(r.recall8.latencyMs.p50), fmt.ms(r.recall8.latencyMs.p99), fmt.rate(r.recall8.rps),
    r.recall1.errors + r.recall1.non2xx + r.recall8.errors + r.recall8.non2xx,
    fmt.ms(r.raw.knnMs.p50), r.raw.ivfKnnMs ? fmt.ms(r.raw.ivfKnnMs.p50) : '—', r.raw.ivfRecall === null ? '—' : `${(100 * r.raw.ivfRecall).toFixed(1)}%`,
    fmt.ms(r.raw.ftsMs.p50), fmt.ratio(r.recall1.latencyMs.p50 / (r.raw.knnMs.p50 + r.raw.ftsMs.p50)),
    fmt.int(r.dbMb), fmt.int(r.peakRssMb), fmt.int(r.pssMb), fmt.int(r.rssAnonMb), r.seed.seconds.toFixed(0),
  ])));
out.push('Latencies in ms. exact KNN = vec0 MATCH k=50 over every vector; IVF KNN = the same in the cells the service probes (from');
out.push(`${DEFAULT_VECTOR_INDEX_MIN.toLocaleString('en')} memories up an IVF index is built); IVF recall = share of the exact 50 neighbours IVF also returns; raw FTS =`);
out.push('FTS5 MATCH ORDER BY rank LIMIT 50; all on the same file before the service starts. p50/raw = service recall p50 (c=1)');
out.push('over exact KNN + raw FTS, the cost of answering without an index. Memory in MiB: peak RSS (VmHWM)');
out.push('counts pages of the memory-mapped database once per read connection that touched them; PSS (after the run) counts');
out.push('each page once; anon (after the run) is heaps, SQLite caches and model weights only.');

const swept = rows.filter((r) => r.raw.probeSweep.length > 0);
if (swept.length > 0) {
  out.push(table(`IVF probes: share of the exact ${DEPTH} nearest neighbours found / mean KNN ms, by cells scanned (SERVICE_VECTOR_INDEX_PROBES)`,
    ['memories', 'embedder', 'cells', 'default', ...PROBE_SWEEP.map((p) => `${p} probes`)],
    swept.map((r) => [
      fmt.int(r.memories), r.embedder, String(cellCountFor(r.memories)), String(probeCountFor(cellCountFor(r.memories))),
      ...r.raw.probeSweep.map((p) => `${(100 * p.recall).toFixed(1)}% / ${p.ms.toFixed(1)}`),
    ])));
}

const coded = rows.filter((r) => r.raw.codes);
if (coded.length > 0) {
  out.push(table(`Shared int8 codes (one copy per service): share of the exact ${DEPTH} found / mean ms of probe + scan + exact re-rank`,
    ['memories', 'embedder', 'codes MiB', 'load s', 'default probes', 'p50 ms', 'recall', ...CODE_SHARE_SWEEP.map((share) => `${share * 100}% of cells`)],
    coded.map((r) => {
      const c = r.raw.codes!;
      return [
        fmt.int(r.memories), r.embedder, fmt.int(c.mb), (c.loadMs / 1000).toFixed(1), String(c.probes), fmt.ms(c.knnMs.p50), `${(100 * c.recall).toFixed(1)}%`,
        ...c.sweep.map((p) => `${p.probes}: ${(100 * p.recall).toFixed(1)}% / ${p.ms.toFixed(1)}`),
      ];
    })));
}
const withOff = rows.filter((r) => r.codesOff);
if (withOff.length > 0) {
  out.push(table('This build with the shared vector codes at its default budget (or SERVICE_VECTOR_CODES_MB when set) and off (SERVICE_VECTOR_CODES_MB=0), same file, off measured second',
    ['memories', 'embedder', 'codes', 'c=1 p50', 'p99', 'c=8 p50', 'p99', 'req/s', 'start s', 'codes ready s', 'codes MiB', 'peak RSS', 'PSS', 'anon'],
    withOff.flatMap((r) => [
      [fmt.int(r.memories), r.embedder, r.codesTooLarge ? 'on (did not fit: vec0)' : 'on', fmt.ms(r.recall1.latencyMs.p50), fmt.ms(r.recall1.latencyMs.p99), fmt.ms(r.recall8.latencyMs.p50), fmt.ms(r.recall8.latencyMs.p99), fmt.rate(r.recall8.rps),
        (r.startMs / 1000).toFixed(1), r.codesReadyMs === null ? '—' : (r.codesReadyMs / 1000).toFixed(1), fmt.int(r.codesMb), fmt.int(r.peakRssMb), fmt.int(r.pssMb), fmt.int(r.rssAnonMb)],
      [fmt.int(r.memories), r.embedder, 'off', fmt.ms(r.codesOff!.recall1.latencyMs.p50), fmt.ms(r.codesOff!.recall1.latencyMs.p99), fmt.ms(r.codesOff!.recall8.latencyMs.p50), fmt.ms(r.codesOff!.recall8.latencyMs.p99), fmt.rate(r.codesOff!.recall8.rps),
        (r.codesOff!.startMs / 1000).toFixed(1), '—', '0', fmt.int(r.codesOff!.peakRssMb), fmt.int(r.codesOff!.pssMb), fmt.int(r.codesOff!.rssAnonMb)],
    ])));
}
const compared = rows.filter((r) => r.baseline);
if (compared.length > 0) {
  out.push(table('This build against BENCH_BASELINE_MAIN on the same file (baseline measured second)',
    ['memories', 'embedder', 'build', 'c=1 p50', 'p99', 'c=8 p50', 'p99', 'req/s', 'start s', 'peak RSS', 'PSS', 'anon'],
    compared.flatMap((r) => [
      [fmt.int(r.memories), r.embedder, 'this build', fmt.ms(r.recall1.latencyMs.p50), fmt.ms(r.recall1.latencyMs.p99), fmt.ms(r.recall8.latencyMs.p50), fmt.ms(r.recall8.latencyMs.p99), fmt.rate(r.recall8.rps),
        (r.startMs / 1000).toFixed(1), fmt.int(r.peakRssMb), fmt.int(r.pssMb), fmt.int(r.rssAnonMb)],
      [fmt.int(r.memories), r.embedder, 'baseline', fmt.ms(r.baseline!.recall1.latencyMs.p50), fmt.ms(r.baseline!.recall1.latencyMs.p99), fmt.ms(r.baseline!.recall8.latencyMs.p50), fmt.ms(r.baseline!.recall8.latencyMs.p99), fmt.rate(r.baseline!.recall8.rps),
        (r.baseline!.startMs / 1000).toFixed(1), fmt.int(r.baseline!.peakRssMb), fmt.int(r.baseline!.pssMb), fmt.int(r.baseline!.rssAnonMb)],
    ])));
}

const beside = rows.find((r) => r.writes);
if (postgres && beside?.writes) {
  out.push(postgresReport(postgres, { recall: beside.recall1, rawRecall: beside.raw.recallShapedMs, writes: beside.writes.stream, rawWrites: beside.writes.raw }));
} else if (withPostgres) {
  out.push('\nPostgreSQL: not measured (see the note above).');
}

const targets: (string | number)[][] = [];
const at = (n: number) => rows.find((r) => r.memories === n && r.embedder === 'hash-256');
const r100k = at(100_000);
if (r100k) {
  const { p50, p99 } = r100k.recall1.latencyMs;
  targets.push(['recall @100k p50 (hash-256, c=1)', fmt.ms(p50), '≤ 20 ms', p50 <= 20 ? 'met' : 'missed']);
  targets.push(['recall @100k p99 (hash-256, c=1)', fmt.ms(p99), '≤ 60 ms', p99 <= 60 ? 'met' : 'missed']);
}
const use100k = rows.find((r) => r.memories === 100_000 && r.embedder === 'use-lite-512');
if (use100k) {
  const { p50, p99 } = use100k.recall1.latencyMs;
  targets.push(['recall @100k p50 (USE-lite query, c=1)', fmt.ms(p50), '≤ 20 ms', p50 <= 20 ? 'met' : 'missed']);
  targets.push(['recall @100k p99 (USE-lite query, c=1)', fmt.ms(p99), '≤ 60 ms', p99 <= 60 ? 'met' : 'missed']);
}
const r1m = at(1_000_000);
if (r1m) {
  targets.push(['recall @1M p50 (hash-256, c=1)', fmt.ms(r1m.recall1.latencyMs.p50), '≤ 50 ms', r1m.recall1.latencyMs.p50 <= 50 ? 'met' : 'missed']);
  targets.push(['server peak RSS @1M (VmHWM)', `${fmt.int(r1m.peakRssMb)} MiB`, '≤ 2 GB', r1m.peakRssMb <= 2048 ? 'met' : 'missed']);
  targets.push(['server PSS @1M (shared file pages counted once)', `${fmt.int(r1m.pssMb)} MiB`, '(≤ 2 GB)', r1m.pssMb <= 2048 ? 'met' : 'missed']);
}
if (targets.length) out.push(table('Targets', ['figure', 'measured', 'target', 'status'], targets));
const minutes = (performance.now() - started) / 60_000;
out.push(`\nTotal time ${minutes.toFixed(1)} min (excluding the build).`);
console.log(out.join('\n'));

const series = (embedder: string, p: 'p50' | 'p90' | 'p99') => ({
  name: `${p} ${embedder === 'hash-256' ? 'hash' : 'USE-lite'}`,
  points: rows.filter((r) => r.embedder === embedder).map((r) => [r.memories, r.recall1.latencyMs[p]] as [number, number]),
});
const svg = renderCharts([
  {
    title: 'recall latency vs dataset size (c=1, over HTTP)',
    xLabel: 'memories',
    yLabel: 'latency, ms (log)',
    series: [series('hash-256', 'p50'), series('hash-256', 'p90'), series('hash-256', 'p99'), series('use-lite-512', 'p50'), series('use-lite-512', 'p99'),
      { name: 'raw KNN p50', points: rows.filter((r) => r.embedder === 'hash-256').map((r) => [r.memories, r.raw.knnMs.p50]) }],
  },
], `memory-runtime bench:scale ${info.date} — indicative, shared ${info.cpus}-CPU machine`);
const files = writeResults(withPostgres ? 'scale-postgres' : 'scale', { machine: info, commit: commitOf(), settings: { seconds, sizes, useAt, postgresAt }, rows, postgres, targets, minutes }, svg);
note(`results: ${files.join(', ')}`);
