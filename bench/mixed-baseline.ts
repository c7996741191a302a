// `node dist/bench/mixed.js --baseline-dist <other build's dist>`: bench:mixed's recall phases
// against another build in the same run. Two services (this build's `src/main.js` and the other
// build's), each filled with the same 5,000 memories through POST /v1/remember (USE-lite) and
// drained; then every recall phase runs on one and right after on the other, the order swapped
// each round, each pair on the same distinct queries — whatever else the machine runs moves both
// alike. Phases: idle at c=1 (p50/p95), c=4 and c=16 (rounds, medians kept), then once each:
// while remember streams in at a fixed rate, and right after a 5k-write burst.
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { note } from './lib/progress.js';
import { startService, type ServerProcess } from './lib/processes.js';
import { fmt, table } from './lib/report.js';
import { runWrk, writeScript, wrkAvailable, type WrkResult } from './lib/wrk.js';
import { threadCpu } from './lib/thread-cpu.js';

/**
 * Remembers per second sent while recall is measured, the same for both builds: an unpaced
 * stream (c=4, closed loop) sends as many as each build accepts, so a build with faster writes
 * gave its recalls more concurrent work (555 vs 257 writes/s in one run) and looked slower.
 * Below what either build sustains here (~250/s at c=4); the achieved rate is printed.
 */
const STREAM_RATE = 200;
const STREAM_CONNECTIONS = 8;

export interface MixedTexts {
  remember(n: number): string[];
  recall(n: number): string[];
}

export interface BaselinePhase {
  phase: string;
  connections: number;
  current: WrkResult[];
  baseline: WrkResult[];
  /** The service's CPU (all its threads) per answered recall, ms, in each of the rounds above. */
  cpuMs: Record<Build, number[]>;
}

export interface MixedBaselineResults {
  baselineDist: string;
  currentDist?: string;
  rounds: number;
  phases: BaselinePhase[];
}

type Build = 'current' | 'baseline';

export async function runMixedAgainst(workDir: string, baselineDist: string, options: {
  texts: MixedTexts; memories: number; seconds: number; rounds: number;
  /** Another build's dist in the "this" slot (default: the build this script belongs to), so a
   *  comparison can be run both ways round: the slot started and filled first can read slower. */
  currentDist?: string;
  /** Only the alternated idle phases (c=1, 4, 16): no remember stream, no burst. */
  idleOnly?: boolean;
  postAll: (base: string, route: string, bodies: string[], concurrency: number) => Promise<number>;
  drained: (base: string) => Promise<void>;
}): Promise<MixedBaselineResults> {
  if (!(await wrkAvailable())) throw new Error('bench:mixed needs wrk (apt-get install wrk)');
  const { texts, seconds, rounds } = options;
  const script = writeScript(workDir);
  let files = 0;
  const bodiesFile = (lines: string[]) => {
    const path = join(workDir, `bodies-${++files}.jsonl`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    return path;
  };
  const env = { SERVICE_RATE_LIMIT: '0', LOG_LEVEL: 'info' };
  const services: Partial<Record<Build, ServerProcess>> = {};
  try {
    services.current = await startService({ dbPath: join(workDir, 'current.db'), embedder: 'use', env,
      ...(options.currentDist ? { main: join(options.currentDist, 'src', 'main.js') } : {}) });
    services.baseline = await startService({ dbPath: join(workDir, 'baseline.db'), embedder: 'use', env, main: join(baselineDist, 'src', 'main.js') });
    const bases = { current: services.current.base, baseline: services.baseline.base };
    const fill = texts.remember(options.memories);
    for (const build of ['current', 'baseline'] as const) {
      note(`filling ${build} with ${options.memories} memories via remember`);
      await options.postAll(bases[build], '/v1/remember', fill, 16);
      await options.drained(bases[build]);
    }
    const phases = new Map<string, BaselinePhase>();
    const cpuSeconds = (build: Build) => Object.values(threadCpu(services[build]!.pid)).reduce((sum, s) => sum + s, 0);
    const spent: Record<Build, number> = { current: 0, baseline: 0 };
    const record = (phase: string, connections: number, build: Build, result: WrkResult) => {
      const entry = phases.get(phase) ?? { phase, connections, current: [], baseline: [], cpuMs: { current: [], baseline: [] } };
      entry[build].push(result);
      entry.cpuMs[build].push(result.requests > 0 ? (spent[build] * 1000) / result.requests : NaN);
      phases.set(phase, entry);
    };
    const recall = async (build: Build, title: string, connections: number, bodies: string) => {
      const before = cpuSeconds(build);
      const result = await runWrk(script, { title: `${title} (${build})`, base: bases[build], route: '/v1/recall', connections, seconds, bodiesFile: bodies });
      spent[build] = cpuSeconds(build) - before;
      return result;
    };
    const warm = bodiesFile(texts.recall(2_000));
    for (const build of ['current', 'baseline'] as const) await recall(build, 'warm-up', 4, warm);
    for (let round = 0; round < rounds; round++) {
      const order: Build[] = round % 2 === 0 ? ['baseline', 'current'] : ['current', 'baseline'];
      for (const [phase, connections, lines] of [['recall idle, c=1', 1, 5_000], ['recall idle, c=4', 4, 20_000], ['recall idle, c=16', 16, 20_000]] as const) {
        const bodies = bodiesFile(texts.recall(lines));
        for (const build of order) record(phase, connections, build, await recall(build, phase, connections, bodies));
      }
    }
    if (options.idleOnly) return { baselineDist, currentDist: options.currentDist, rounds, phases: [...phases.values()] };
    // Writes grow each store alike: once per build, in the same order, each with its own stream and burst.
    const queries = bodiesFile(texts.recall(20_000));
    const stream = texts.remember(60_000);
    const STREAMING = `recall while remember streams (${STREAM_RATE}/s)`;
    const burst = texts.remember(5_000);
    for (const build of ['baseline', 'current'] as const) {
      const [during] = await Promise.all([
        recall(build, STREAMING, 4, queries),
        runWrk(script, { title: `remember stream (${build})`, base: bases[build], route: '/v1/remember', connections: STREAM_CONNECTIONS, seconds, rate: STREAM_RATE, bodiesFile: bodiesFile(stream) }),
      ]);
      record(STREAMING, 4, build, during);
      await options.drained(bases[build]);
      await options.postAll(bases[build], '/v1/remember', burst, 16);
      record('recall after a 5k burst', 4, build, await recall(build, 'recall after a 5k burst', 4, queries));
      await options.drained(bases[build]);
    }
    return { baselineDist, currentDist: options.currentDist, rounds, phases: [...phases.values()] };
  } finally {
    await services.current?.stop();
    await services.baseline?.stop();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function mixedBaselineReport(r: MixedBaselineResults, memories: number, seconds: number): string {
  const figure = (runs: WrkResult[], pick: (w: WrkResult) => number | undefined) => median(runs.map((w) => pick(w) ?? NaN));
  const rows = r.phases.map((p) => {
    const cell = (pick: (w: WrkResult) => number | undefined) => {
      const current = figure(p.current, pick);
      const baseline = figure(p.baseline, pick);
      return `${fmt.ms(current)} / ${fmt.ms(baseline)} = ${fmt.ratio(current / baseline)}`;
    };
    const each = (runs: WrkResult[]) => runs.map((w) => `${fmt.ms(w.p50)}/${fmt.ms(w.p99)}`).join(', ');
    const rps = [figure(p.current, (w) => w.rps), figure(p.baseline, (w) => w.rps)];
    const cpu = [median(p.cpuMs.current), median(p.cpuMs.baseline)];
    return [p.phase, p.connections, p.current.length, cell((w) => w.p50), cell((w) => w.p95), cell((w) => w.p99),
      `${fmt.int(rps[0])} / ${fmt.int(rps[1])} = ${fmt.ratio(rps[0] / rps[1])}`,
      `${fmt.ms(cpu[0])} / ${fmt.ms(cpu[1])}`,
      p.current.reduce((n, w) => n + w.errors, 0) + p.baseline.reduce((n, w) => n + w.errors, 0),
      `${each(p.current)} | ${each(p.baseline)}`];
  });
  return table(`Recall, ${r.currentDist ?? 'this build'} vs ${r.baselineDist} (USE-lite, ${memories.toLocaleString('en')} memories each; wrk, ${seconds} s a phase, alternated, median of the rounds; this / baseline = ratio)`,
    ['phase', 'conns', 'rounds', 'p50 ms', 'p95 ms', 'p99 ms', 'req/s', 'CPU ms per recall', 'errors', 'each round p50/p99: this | baseline'], rows);
}
