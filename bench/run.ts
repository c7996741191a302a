// `npm run bench`: the standard set — micro-benchmarks, raw limits and HTTP load — on one
// seeded database, printed as tables with every service figure beside its raw limit.
// `node dist/bench/run.js micro|limits|http …` runs only the named parts.
// Environment: BENCH_SECONDS (per load phase, default 10), BENCH_MEMORIES (default 10000),
// BENCH_LEVELS (concurrency levels, default 1,8,32,128), BENCH_USE=0 (skip USE-lite phases),
// BENCH_CPU_PROF=<dir> (run the service under node --cpu-prof).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runHttp, type HttpResults } from './http.js';
import { measureInsertLimits, type InsertLimit } from './limits.js';
import { runMicro, type MicroResults } from './micro.js';
import { mixedReport, runMixed, type MixedResults } from './mixed.js';
import { note } from './lib/progress.js';
import { fmt, machine, table, writeResults } from './lib/report.js';
import { seedDatabase } from './lib/seed.js';
import { renderCharts } from './lib/svg.js';

const parts = new Set(process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['micro', 'limits', 'http', 'mixed']);
for (const part of parts) if (!['micro', 'limits', 'http', 'mixed'].includes(part)) throw new Error(`unknown part "${part}" (micro, limits, http, mixed)`);
const env = (name: string, fallback: string) => process.env[name]?.trim() || fallback;
const seconds = Number(env('BENCH_SECONDS', '10'));
const memories = Number(env('BENCH_MEMORIES', '10000'));
const levels = env('BENCH_LEVELS', '1,8,32,128').split(',').map(Number);
const withUse = env('BENCH_USE', '1') !== '0';

const started = performance.now();
const workDir = mkdtempSync(join(tmpdir(), 'memrt-bench-'));
const info = machine();
note(`work folder ${workDir}; ${info.cpus} CPUs, load average ${info.loadAverageAtStart.join(' ')}`);

let micro: MicroResults | undefined;
let inserts: InsertLimit[] | undefined;
let http: HttpResults | undefined;
let mixed: MixedResults | undefined;
try {
  if (parts.has('micro') || parts.has('limits')) {
    const dbPath = join(workDir, 'micro.db');
    await seedDatabase({ path: dbPath, memories, embedder: { id: 'hash-256', dimensions: 256 }, label: '(hash-256, micro and limits)' });
    if (parts.has('micro')) micro = await runMicro(dbPath, memories, { withUse });
    if (parts.has('limits')) inserts = measureInsertLimits(dbPath, memories, 3, [1, 64, 512]);
  }
  if (parts.has('http')) {
    http = await runHttp({ workDir, memories, seconds, warmupSeconds: 2, levels, withUse, cpuProfDir: process.env.BENCH_CPU_PROF });
  }
  // Recall under load and the front end's cost (wrk, USE-lite); also alone: npm run bench:mixed.
  if (parts.has('mixed')) mixed = await runMixed(workDir);
} finally {
  rmSync(workDir, { recursive: true, force: true });
}

const out: string[] = [];
out.push(`memory-runtime benchmarks — ${info.date}, Node ${info.node}, ${info.cpus} × ${info.cpuModel}, load average at start ${info.loadAverageAtStart.join(' ')}`);
out.push(`Indicative only: one run on a shared machine. Seeded databases were written directly with better-sqlite3 (not over HTTP).`);

if (micro) {
  out.push(table(`Micro-benchmarks (tinybench, ${micro.memories.toLocaleString('en')} memories, hash-256 vectors) — mean µs`,
    ['operation', 'service', 'p99', 'raw baseline', 'raw', 'ratio'],
    micro.pairs.map((p) => [p.name, fmt.us(p.service.meanMs), fmt.us(p.service.p99Ms), p.rawLabel, fmt.us(p.raw.meanMs), fmt.ratio(p.ratio)])));
}
if (inserts) {
  out.push(table('Raw SQLite insert limit (memory row + owner link, same indexes and FTS triggers, synchronous=FULL)',
    ['rows per transaction', 'rows/s'], inserts.map((l) => [l.rowsPerTransaction, fmt.int(l.rowsPerSecond)])));
}
const ratios: (string | number)[][] = [];
if (http) {
  out.push(table(`HTTP (autocannon, ${seconds} s per phase after a 2 s warm-up; ${http.memories.toLocaleString('en')} seeded memories; server in its own process)`,
    ['scenario', 'embedder', 'conns', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'errors', 'non-2xx', 'memories', 'RSS MiB', 'anon MiB'],
    [
      ['uWS hello-world (limit)', '—', http.uwsHello.connections, fmt.int(http.uwsHello.rps), fmt.ms(http.uwsHello.latencyMs.p50), fmt.ms(http.uwsHello.latencyMs.p90),
        fmt.ms(http.uwsHello.latencyMs.p99), fmt.ms(http.uwsHello.latencyMs.max), http.uwsHello.errors + http.uwsHello.timeouts, http.uwsHello.non2xx, '—', '—', '—'],
      ...http.phases.map((p) => [p.scenario, p.embedder, p.connections, fmt.rate(p.rps), fmt.ms(p.latencyMs.p50), fmt.ms(p.latencyMs.p90),
        fmt.ms(p.latencyMs.p99), fmt.ms(p.latencyMs.max), p.errors + p.timeouts, p.non2xx, fmt.int(p.memoriesAfter), fmt.int(p.rssMb), fmt.int(p.rssAnonMb)]),
    ]));
  out.push('uWS hello-world and health: median of 3 alternating rounds (req/s per round: ' +
    http.healthRounds.map((r) => `${fmt.int(r.uwsRps)}/${fmt.int(r.serviceRps)}`).join(', ') + ' uWS/service).');
  out.push('memories = active memories when the phase ended; RSS is measured then too (it counts pages of the memory-mapped');
  out.push('database once per read connection; anon is heaps and caches only). Write phases run last so read figures are');
  out.push('those of the seeded size.');
  const phase = (scenario: string, c?: number, embedder = 'hash-256') =>
    http!.phases.find((p) => p.scenario === scenario && p.embedder === embedder && (c === undefined || p.connections === c));
  const health = phase('health');
  if (health) ratios.push(['GET /v1/health req/s vs bare uWS', fmt.int(health.rps), fmt.int(http.uwsHello.rps), fmt.pct(health.rps / http.uwsHello.rps), '≥ 60%', health.rps / http.uwsHello.rps >= 0.6 ? 'met' : 'missed']);
  const writes = phase('remember');
  const batched = inserts?.find((l) => l.rowsPerTransaction === 64);
  if (writes) {
    const clean = writes.errors + writes.timeouts + writes.non2xx === 0;
    ratios.push(['remember writes/s (c=64, FULL) vs raw 64-row txns', fmt.int(writes.rps), batched ? fmt.int(batched.rowsPerSecond) : 'n/a',
      batched ? fmt.pct(writes.rps / batched.rowsPerSecond) : 'n/a', '≥ 2,000/s, 0 errors', writes.rps >= 2000 && clean ? 'met' : 'missed']);
  }
  const recall1 = phase('recall', 1);
  const rawLookup = micro?.pairs.find((p) => p.name.startsWith('recall engine'));
  if (recall1 && rawLookup) {
    ratios.push(['recall p50 ms (c=1, hash) vs raw FTS+KNN', fmt.ms(recall1.latencyMs.p50), fmt.ms(rawLookup.raw.meanMs),
      fmt.ratio(recall1.latencyMs.p50 / rawLookup.raw.meanMs), '(ratio only)', '—']);
  }
  const mixedTop = http.phases.filter((p) => p.scenario === 'mixed' && p.embedder === 'hash-256').sort((a, b) => b.connections - a.connections)[0];
  if (mixedTop) {
    const bad = mixedTop.errors + mixedTop.timeouts + mixedTop.non2xx;
    ratios.push([`mixed workload errors at c=${mixedTop.connections}`, bad, 0, '—', '0', bad === 0 ? 'met' : 'missed']);
  }
  out.push(table('Service figures against their limits and targets', ['figure', 'service', 'limit', 'ratio', 'target', 'status'], ratios));
}
if (mixed) out.push(mixedReport(mixed));
const minutes = (performance.now() - started) / 60_000;
out.push(`\nTotal time ${minutes.toFixed(1)} min (excluding the build). Recall at 100k/1M memories: npm run bench:scale.`);
console.log(out.join('\n'));

const svg = http
  ? renderCharts(
      (['recall', 'mixed'] as const).map((scenario) => ({
        title: `${scenario}: latency vs concurrency (${http!.memories.toLocaleString('en')} memories, hash-256)`,
        xLabel: 'concurrent connections',
        yLabel: 'latency, ms (log)',
        series: (['p50', 'p90', 'p99'] as const).map((p) => ({
          name: p,
          points: http!.phases.filter((x) => x.scenario === scenario && x.embedder === 'hash-256').map((x) => [x.connections, x.latencyMs[p]] as [number, number]),
        })),
      })),
      `memory-runtime bench ${info.date} — indicative, shared ${info.cpus}-CPU machine`,
    )
  : undefined;
const files = writeResults('bench', { machine: info, settings: { seconds, memories, levels, withUse }, micro, inserts, http, mixed, ratios, minutes }, svg);
note(`results: ${files.join(', ')}`);
