// `npm run bench:mixed` (also part of `npm run bench`): does recall stay fast while the service
// is busy? A fresh service with the default embedder (USE-lite) and default logging is filled
// with 5,000 memories through POST /v1/remember, then recall at c=4 is measured idle, while
// remember streams in at c=4, and right after a 5k-write burst (embedding backlog draining).
// A control phase sends the same write stream at the same rate to the bare uWS server while
// recall runs: the same-run baseline for what the generators and the box cost, apart from the service.
// Also: GET /v1/health against the bare uWS hello-world (same generator, same run), recall
// throughput at c=16 against the raw per-recall CPU cost measured in isolation, and the
// embedding lag under a sustained 2k writes/s. Load comes from wrk (Debian's package).
// Environment: BENCH_MIXED_SECONDS (per phase, default 8).
// With `--baseline-dist <other build's dist>`: the recall phases against that build in the same
// run, alternated (mixed-baseline.ts; BENCH_MIXED_ROUNDS, default 3); nothing else is measured.
// `--current-dist <dist>` puts a third build in the "this" slot (to run a comparison both ways
// round, or an A/A check); BENCH_MIXED_IDLE_ONLY=1 keeps only the alternated idle phases.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { UseLiteEmbedder } from '../src/workers/embedding/use-lite.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { Corpus } from './lib/corpus.js';
import { note } from './lib/progress.js';
import { pinToCpu, startService, startUwsHello, type ServerProcess } from './lib/processes.js';
import { formatCores, withThreadCpu, type ThreadCpu } from './lib/thread-cpu.js';
import { fmt, machine, table, writeResults } from './lib/report.js';
import { runWrk, writeScript, wrkAvailable, type WrkResult } from './lib/wrk.js';
import { mixedBaselineReport, runMixedAgainst } from './mixed-baseline.js';

/** Share of its one core the bare server must use for wrk to count as saturating it. */
const SATURATED_CORES = 0.9;
const seconds = Number(process.env.BENCH_MIXED_SECONDS?.trim() || '8');
const MEMORIES = 5_000;
const ENTITIES = 500;
const POOL_THREADS = 2;
/** Paced a little above the target so the rate achieved (printed) is at least 2k/s. */
const LAG_RATE = 2_200;
const LAG_SECONDS = 10;
const HEALTH_ROUNDS = 3;
const HEALTH_SECONDS = 4;
const C16_ROUNDS = 3;

export interface MixedResults {
  recallIdle: WrkResult;
  recallStreaming: WrkResult;
  remembersStreaming: WrkResult;
  /** Control: recall while the same write stream, at the streaming phase's rate, goes to the bare server. */
  recallControl: WrkResult;
  remembersControl: WrkResult;
  recallAfterBurst: WrkResult;
  burstWritesPerSecond: number;
  recallC16: WrkResult;
  rawRecallMs: { embed: number; search: number; total: number };
  /** Each c=16 round beside the raw cost measured right after it; recallC16/rawRecallMs are the median round's. */
  c16Rounds: { result: WrkResult; raw: { embed: number; search: number; total: number }; ratio: number }[];
  health: WrkResult;
  uwsHello: WrkResult;
  /** Server CPU per request (all threads), µs: what the front end costs, whatever else the machine runs. */
  healthCpuUs: number;
  uwsCpuUs: number;
  /** Cores the bare server used under wrk: near 1 = its one thread saturated. */
  uwsCores: number;
  /** Servers on CPU 0 and wrk on CPU 1 during the health rounds. */
  pinned: boolean;
  /** Cores used by each of the service's threads: recall idle, recall while writes stream, health. */
  threads: { idle: ThreadCpu; streaming: ThreadCpu; control: ThreadCpu; health: ThreadCpu };
  healthRounds: { serviceRps: number; uwsRps: number }[];
  lag: { writes: number; writesPerSecond: number; errors: number; maxLagSeconds: number; embedder: string };
  useSentencesPerSecond: number;
}

/** Sends every body to `route`, `concurrency` at a time; returns writes/s. */
async function postAll(base: string, route: string, bodies: string[], concurrency: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const res = await fetch(base + route, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      if (res.status !== 201) throw new Error(`${route} answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  }));
  return bodies.length / ((performance.now() - started) / 1000);
}

async function backlog(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const match = /^memory_runtime_embedding_backlog (\d+)/m.exec(text);
  if (!match) throw new Error('no embedding backlog in /metrics');
  return Number(match[1]);
}

async function drained(base: string): Promise<void> {
  while ((await backlog(base)) > 0) await new Promise((r) => setTimeout(r, 250));
}

class Texts {
  private readonly corpus = new Corpus(7, ENTITIES);
  private facts = 0;
  private readonly seen = new Set<string>();
  remember(n: number): string[] {
    return Array.from({ length: n }, () => {
      const entity = this.corpus.entity();
      return JSON.stringify({ entity, fact: `${this.corpus.fact(entity)} (note ${++this.facts})`, confidence: 0.9 });
    });
  }
  /** Distinct query strings: none repeats within the run. */
  recall(n: number): string[] {
    const out: string[] = [];
    while (out.length < n) {
      const query = this.corpus.query();
      if (this.seen.has(query)) continue;
      this.seen.add(query);
      out.push(JSON.stringify({ query, limit: 10 }));
    }
    return out;
  }
}

/**
 * One recall's CPU work measured in this process, one at a time: query embed, then KNN + FTS +
 * graph + fusion on the service's file (read-only, beside the idle service).
 */
class RawRecall {
  private constructor(private readonly db: ReturnType<typeof openDatabase>, private readonly engine: RecallEngine, private readonly use: UseLiteEmbedder) {}

  static async open(dbPath: string): Promise<RawRecall> {
    const db = openDatabase(dbPath, { readonly: true });
    const engine = new RecallEngine(new SqliteReadPort(db, 1, 'default', { minSimilarity: 0.45 }));
    return new RawRecall(db, engine, await UseLiteEmbedder.load());
  }

  /** Mean ms per recall over `queries` after 20 warm-up ones. */
  async cost(queries: string[]): Promise<MixedResults['rawRecallMs']> {
    for (const q of queries.slice(0, 20)) await this.engine.recall({ query: q, entity: null, types: null, limit: 10, queryVector: (await this.use.embed([q]))[0] });
    let embed = 0;
    let search = 0;
    const measured = queries.slice(20);
    for (const query of measured) {
      const t0 = performance.now();
      const [queryVector] = await this.use.embed([query]);
      const t1 = performance.now();
      await this.engine.recall({ query, entity: null, types: null, limit: 10, queryVector });
      search += performance.now() - t1;
      embed += t1 - t0;
    }
    const n = measured.length;
    return { embed: embed / n, search: search / n, total: (embed + search) / n };
  }

  /** The embedder's batch throughput: it bounds how fast any backlog can drain. */
  async sentencesPerSecond(texts: string[]): Promise<number> {
    const batch = texts.slice(0, 64);
    const b0 = performance.now();
    for (let i = 0; i < 3; i++) await this.use.embed(batch);
    return (3 * batch.length) / ((performance.now() - b0) / 1000);
  }

  close(): void {
    this.db.close();
  }
}

interface Sample { t: number; memories: number; backlog: number }

async function scrape(base: string): Promise<Sample> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const memories = [...text.matchAll(/^memory_runtime_memories\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  const backlog = Number(/^memory_runtime_embedding_backlog (\d+)/m.exec(text)?.[1] ?? NaN);
  return { t: performance.now(), memories, backlog };
}

/**
 * Writes at a paced rate for `duration` s into an empty namespace while /metrics is scraped
 * every 100 ms: memories(t) says when the k-th memory was stored, memories − backlog when it
 * had its vector (the backfill embeds oldest first). The largest gap over k is the max lag.
 */
async function embeddingLag(script: string, base: string, bodiesFile: string, rate: number, duration: number): Promise<MixedResults['lag']> {
  // Open-loop pacing (wrk.ts): the connections only bound how many writes are in flight. A
  // group commit's fsync holds a batch for tens of ms, so 128 leave room for ~5k writes/s.
  const connections = 128;
  const samples: Sample[] = [];
  let writing = true;
  const load = runWrk(script, {
    title: `remember paced at ${rate}/s`, base, route: '/v1/remember', connections, seconds: duration, threads: 1, bodiesFile, rate,
  }).finally(() => (writing = false));
  const started = performance.now();
  for (;;) {
    const sample = await scrape(base);
    samples.push(sample);
    if (!writing && sample.backlog === 0) break;
    if (sample.t - started > 300_000) throw new Error('embedding lag: backlog still not drained after 300 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const written = await load;
  const total = samples[samples.length - 1].memories;
  const firstAt = (k: number, value: (s: Sample) => number) => samples.find((s) => value(s) >= k)!.t;
  let maxLag = 0;
  for (let k = 1; k <= total; k += Math.max(1, Math.floor(total / 2000))) {
    maxLag = Math.max(maxLag, firstAt(k, (s) => s.memories - s.backlog) - firstAt(k, (s) => s.memories));
  }
  return { writes: written.requests, writesPerSecond: written.rps, errors: written.errors, maxLagSeconds: maxLag / 1000, embedder: '' };
}

export async function runMixed(workDir: string): Promise<MixedResults> {
  if (!(await wrkAvailable())) throw new Error('bench:mixed needs wrk (apt-get install wrk)');
  const script = writeScript(workDir);
  const texts = new Texts();
  const bodiesFile = (name: string, lines: string[]) => {
    const path = join(workDir, `${name}.jsonl`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    return path;
  };
  const dbPath = join(workDir, 'mixed.db');
  // Default embedder and default log level; only the per-key quota is lifted (one bench client).
  let service: ServerProcess = await startService({ dbPath, embedder: 'use', env: { SERVICE_RATE_LIMIT: '0', LOG_LEVEL: 'info' } });
  let lagService: ServerProcess | null = null;
  let hello: ServerProcess | null = null;
  try {
    const base = service.base;
    note(`filling with ${MEMORIES} memories via remember`);
    await postAll(base, '/v1/remember', texts.remember(MEMORIES), 16);
    await drained(base);
    const recall = (title: string, connections: number, lines: number) =>
      runWrk(script, { title, base, route: '/v1/recall', connections, seconds, bodiesFile: bodiesFile(title.replace(/\W+/g, '-'), texts.recall(lines)) });
    await recall('warm-up', 4, 2_000);
    const { value: recallIdle, cores: idleCores } = await withThreadCpu(service.pid, () => recall('recall idle', 4, 20_000));
    // Throughput at c=16 against the raw cost, alternated over rounds: both move with whatever
    // else the machine runs, so each ratio pairs figures taken seconds apart (the spread is printed).
    const raw = await RawRecall.open(dbPath);
    const c16Rounds: MixedResults['c16Rounds'] = [];
    for (let round = 0; round < C16_ROUNDS; round++) {
      const result = await recall(`recall c=16 (round ${round + 1})`, 16, 20_000);
      const cost = await raw.cost(texts.recall(120).map((b) => JSON.parse(b).query));
      c16Rounds.push({ result, raw: cost, ratio: result.rps / ((POOL_THREADS * 1000) / cost.total) });
    }
    const useSentencesPerSecond = await raw.sentencesPerSecond(texts.recall(64).map((b) => JSON.parse(b).query));
    raw.close();
    const c16 = [...c16Rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(C16_ROUNDS / 2)];

    hello = await startUwsHello();
    const bare = hello;
    const { value: [recallStreaming, remembersStreaming], cores: streamingCores } = await withThreadCpu(service.pid, () => Promise.all([
      recall('recall while writes stream', 4, 20_000),
      runWrk(script, { title: 'remember stream', base, route: '/v1/remember', connections: 4, seconds, bodiesFile: bodiesFile('stream', texts.remember(60_000)) }),
    ]));
    note('waiting for the streamed writes to be embedded');
    await drained(base);
    // Control: the same write stream (same script, connections and rate) sent to the bare
    // server while recall runs against the service. On a 2-core box the generator and the
    // bare server take CPU too; streaming ÷ control is what the service's own write path costs.
    const { value: [recallControl, remembersControl], cores: controlCores } = await withThreadCpu(service.pid, () => Promise.all([
      recall('recall while the write stream goes to bare uWS', 4, 20_000),
      runWrk(script, {
        title: 'remember stream to bare uWS', base: bare.base, route: '/v1/remember', connections: 4, seconds,
        bodiesFile: bodiesFile('control', texts.remember(60_000)), rate: Math.max(1, Math.round(remembersStreaming.rps)),
      }),
    ]));
    const burstWritesPerSecond = await postAll(base, '/v1/remember', texts.remember(5_000), 16);
    const recallAfterBurst = await recall('recall after a 5k burst', 4, 20_000);
    await drained(base);

    // Alternating rounds, median kept: other jobs on a shared machine move both alike. Each
    // server gets CPU 0 to itself and wrk CPU 1, plain GET without Lua (see runWrk): that is
    // what lets one wrk thread drive the bare server to a full core.
    const pinned = pinToCpu(service.pid, 0) && pinToCpu(bare.pid, 0);
    const generatorCpu = pinned ? 1 : undefined;
    const health = (title: string, target: ServerProcess) => withThreadCpu(target.pid, () =>
      runWrk(null, { title, base: target.base, route: '/v1/health', connections: 32, seconds: HEALTH_SECONDS, threads: 1, cpu: generatorCpu }));
    const total = (cores: ThreadCpu) => Object.values(cores).reduce((sum, c) => sum + c, 0);
    const rounds: { health: WrkResult; uws: WrkResult; healthCpuUs: number; uwsCpuUs: number; uwsCores: number; threads: ThreadCpu }[] = [];
    for (let round = 0; round < HEALTH_ROUNDS; round++) {
      const h = await health('GET /v1/health', service);
      const u = await health('bare uWS', bare);
      rounds.push({
        health: h.value, uws: u.value, healthCpuUs: (total(h.cores) * 1e6) / h.value.rps, uwsCpuUs: (total(u.cores) * 1e6) / u.value.rps,
        uwsCores: total(u.cores), threads: h.cores,
      });
    }
    await bare.stop();
    rounds.sort((a, b) => a.health.rps / a.uws.rps - b.health.rps / b.uws.rps);
    const median = rounds[Math.floor(rounds.length / 2)];
    await service.stop();


    // The lag needs an embedder that can keep up with 2k/s at all: USE-lite embeds
    // ~raw.sentencesPerSecond per thread, far below. The hashing embedder isolates the pipeline.
    lagService = await startService({ dbPath: join(workDir, 'lag.db'), embedder: 'hash', dimensions: 256, env: { SERVICE_RATE_LIMIT: '0', LOG_LEVEL: 'info' } });
    const lag = { ...(await embeddingLag(script, lagService.base, bodiesFile('lag', texts.remember(LAG_RATE * LAG_SECONDS * 2)), LAG_RATE, LAG_SECONDS)), embedder: 'hash-256' };
    return {
      recallIdle, recallStreaming, remembersStreaming, recallControl, remembersControl, recallAfterBurst, burstWritesPerSecond, recallC16: c16.result,
      rawRecallMs: c16.raw, c16Rounds,
      health: median.health, uwsHello: median.uws, healthCpuUs: median.healthCpuUs, uwsCpuUs: median.uwsCpuUs, uwsCores: median.uwsCores,
      pinned, threads: { idle: idleCores, streaming: streamingCores, control: controlCores, health: median.threads },
      healthRounds: rounds.map((r) => ({ serviceRps: r.health.rps, uwsRps: r.uws.rps })),
      lag, useSentencesPerSecond,
    };
  } finally {
    await service.stop();
    await lagService?.stop();
    await hello?.stop();
  }
}

export function mixedReport(r: MixedResults): string {
  const row = (name: string, w: WrkResult) => [name, w.connections, fmt.int(w.rps), fmt.ms(w.p50), fmt.ms(w.p99), fmt.ms(w.max), w.errors];
  const idealC16 = (POOL_THREADS * 1000) / r.rawRecallMs.total;
  const met = (ok: boolean) => (ok ? 'met' : 'missed');
  // wrk's rate counts every reply: a run whose writes failed has not shown the rate.
  const lagRateMet = r.lag.writesPerSecond >= 2_000 && r.lag.errors === 0;
  const ratios = r.c16Rounds.map((x) => x.ratio);
  // figure | measured | baseline (same run) | target | status
  const targets: (string | number)[][] = [
    ['recall p99 while writes stream, c=4', `${fmt.ms(r.recallStreaming.p99)} ms = ${fmt.ratio(r.recallStreaming.p99 / r.recallIdle.p99)}`,
      `idle p99 ${fmt.ms(r.recallIdle.p99)} ms`, '≤ 1.5× idle', met(r.recallStreaming.p99 <= 1.5 * r.recallIdle.p99)],
    ['  same, against the control phase', `${fmt.ratio(r.recallStreaming.p99 / r.recallControl.p99)} control p99`,
      `control p99 ${fmt.ms(r.recallControl.p99)} ms (writes to bare uWS at ${fmt.int(r.remembersControl.rps)}/s)`, '(service\'s own share)', '—'],
    ['recall p99 after a 5k burst, c=4', `${fmt.ms(r.recallAfterBurst.p99)} ms = ${fmt.ratio(r.recallAfterBurst.p99 / r.recallIdle.p99)}`,
      `idle p99 ${fmt.ms(r.recallIdle.p99)} ms`, '≤ 2× idle', met(r.recallAfterBurst.p99 <= 2 * r.recallIdle.p99)],
    ['GET /v1/health req/s', `${fmt.int(r.health.rps)} = ${fmt.ratio(r.health.rps / r.uwsHello.rps)}`,
      `bare uWS ${fmt.int(r.uwsHello.rps)} (${r.uwsCores.toFixed(2)} of its core)`, '≥ 0.6× bare',
      r.uwsCores < SATURATED_CORES ? 'not shown (baseline unsaturated)' : met(r.health.rps >= 0.6 * r.uwsHello.rps)],
    [`embedding max lag (${r.lag.embedder})`, `${r.lag.maxLagSeconds.toFixed(1)} s at ${fmt.int(r.lag.writesPerSecond)} writes/s`,
      `${fmt.int(r.lag.writes)} writes (${fmt.int(r.lag.errors)} failed) paced at ${fmt.int(LAG_RATE)}/s for ${LAG_SECONDS} s`, '≤ 10 s at ≥ 2,000 writes/s',
      lagRateMet ? met(r.lag.maxLagSeconds <= 10) : r.lag.errors > 0 ? 'not shown (writes failed)' : 'not shown (rate < 2k/s)'],
    ['recall c=16 req/s ÷ ideal (median round)', `${fmt.int(r.recallC16.rps)} = ${fmt.ratio(r.recallC16.rps / idealC16)} (rounds ${ratios.map((x) => x.toFixed(2)).join(', ')})`,
      `ideal ${fmt.int(idealC16)} = ${POOL_THREADS} threads ÷ ${fmt.ms(r.rawRecallMs.total)} ms raw`, '≥ 0.8×', met(r.recallC16.rps >= 0.8 * idealC16)],
  ];
  return [
    table(`Recall under load (USE-lite, ${MEMORIES.toLocaleString('en')} memories written via remember, default logging; wrk, ${seconds} s a phase, distinct queries)`,
      ['phase', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'errors'],
      [row('recall, idle', r.recallIdle), row('recall, while remember streams', r.recallStreaming), row('  remember stream itself', r.remembersStreaming),
        row('recall, while the same stream goes to bare uWS (control)', r.recallControl), row('  stream to bare uWS, paced at the rate above', r.remembersControl),
        row(`recall, after a 5k burst (${fmt.int(r.burstWritesPerSecond)} writes/s)`, r.recallAfterBurst), row('recall, idle, c=16', r.recallC16),
        row('GET /v1/health', r.health), row('bare uWS hello-world', r.uwsHello)]),
    `Health vs bare uWS: median of ${r.healthRounds.length} alternating rounds of ${HEALTH_SECONDS} s (req/s service/uWS: ` +
      `${r.healthRounds.map((x) => `${fmt.int(x.serviceRps)}/${fmt.int(x.uwsRps)}`).join(', ')}), plain wrk -t1 -c32` +
      `${r.pinned ? ' on CPU 1, each server pinned to CPU 0' : ' (unpinned)'}; server CPU per request ` +
      `${r.healthCpuUs.toFixed(1)} µs vs ${r.uwsCpuUs.toFixed(1)} µs bare. The bare server used ${r.uwsCores.toFixed(2)} of its one thread's core: ${r.uwsCores >= SATURATED_CORES ? 'wrk saturates it' : `NOT saturated (< ${SATURATED_CORES}): the generator or other load limits the baseline, so the ratio is not valid`}.`,
    `Service cores by thread — recall idle: ${formatCores(r.threads.idle)}; while remember streams: ${formatCores(r.threads.streaming)}; ` +
      `control: ${formatCores(r.threads.control)}; ` +
      `health: ${formatCores(r.threads.health)}.`,
    `Raw per-recall CPU cost in isolation: query embed ${fmt.ms(r.rawRecallMs.embed)} ms + search/fusion ${fmt.ms(r.rawRecallMs.search)} ms; ` +
      `USE-lite batch throughput ${fmt.int(r.useSentencesPerSecond)} sentences/s per thread.`,
    `Recall c=16 rounds (req/s vs raw ms measured right after): ${r.c16Rounds.map((x) => `${fmt.int(x.result.rps)}/${fmt.ms(x.raw.total)}`).join(', ')}.`,
    table('Targets (issue 12)', ['figure', 'measured', 'baseline (same run)', 'target', 'status'], targets),
  ].join('\n');
}

const isMain = process.argv[1]?.endsWith('mixed.js');
const baselineAt = process.argv.indexOf('--baseline-dist');
if (isMain && baselineAt >= 0) {
  const baselineDist = process.argv[baselineAt + 1];
  const currentAt = process.argv.indexOf('--current-dist');
  const currentDist = currentAt >= 0 ? process.argv[currentAt + 1] : undefined;
  if (!baselineDist || (currentAt >= 0 && !currentDist)) throw new Error("usage: node dist/bench/mixed.js [--baseline-dist <other build's dist folder> [--current-dist <dist>]]");
  const workDir = mkdtempSync(join(tmpdir(), 'memrt-mixed-'));
  const info = machine();
  try {
    const rounds = Number(process.env.BENCH_MIXED_ROUNDS?.trim() || '3');
    if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_MIXED_ROUNDS must be a positive integer, got ${process.env.BENCH_MIXED_ROUNDS}`);
    const results = await runMixedAgainst(workDir, baselineDist, { texts: new Texts(), memories: MEMORIES, seconds, rounds, postAll, drained,
      currentDist, idleOnly: process.env.BENCH_MIXED_IDLE_ONLY === '1' });
    console.log(`memory-runtime mixed-load bench against a baseline build — ${info.date}, Node ${info.node}, ${info.cpus} × ${info.cpuModel}, load ${info.loadAverageAtStart.join(' ')}`);
    console.log(mixedBaselineReport(results, MEMORIES, seconds));
    note(`results: ${writeResults('mixed-baseline', { machine: info, seconds, results }).join(', ')}`);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
} else if (isMain) {
  const workDir = mkdtempSync(join(tmpdir(), 'memrt-mixed-'));
  const info = machine();
  try {
    const results = await runMixed(workDir);
    console.log(`memory-runtime mixed-load bench — ${info.date}, Node ${info.node}, ${info.cpus} × ${info.cpuModel}, load ${info.loadAverageAtStart.join(' ')}`);
    console.log(mixedReport(results));
    note(`results: ${writeResults('mixed', { machine: info, seconds, results }).join(', ')}`);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}
