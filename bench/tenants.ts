// bench:tenants (issue 25): many small tenants in one process beside one large namespace, in
// the same run, each phase in a process of its own (so RSS is that phase's): the resident memory
// once seeded, embedded and indexed; recall latency p50/p99 through HTTP (small tenants: a random
// tenant per recall, named by the Memory-Namespace header); and HTTP write throughput (remember,
// 32 clients; small tenants: a random tenant per write). A third phase puts the large namespace
// beside the small tenants (the configuration) and recalls in both, reported apart: each
// ranks with its namespace's own statistics (workers/sqlite/namespace-index.ts), which this
// phase prices against the namespace alone (the first two phases).
//   npm run bench:tenants                       short run: 100 tenants × 100 beside one of 10,000
//   BENCH_TENANTS=1000 BENCH_BIG=100000 npm run bench:tenants     the sizes
// BENCH_BASE_DIST names another build's dist/ (e.g. a worktree of main): each phase runs in that
// build too, right after this build's, in the same run (BENCH_BASE_PHASES: which, default all).
// Seeding goes to the writer directly (the remember rule, group-committed); the hash embedder
// keeps the backfill from dominating a short run (the embedder is not what is compared here).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/shared/config.js';
import { createLogger } from '../src/shared/logger.js';
import { startService } from '../src/service.js';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 100);
const PER_TENANT = Number(process.env.BENCH_PER_TENANT ?? 100);
const BIG = Number(process.env.BENCH_BIG ?? 10_000);
const RECALLS = Number(process.env.BENCH_RECALLS ?? 300);
const WRITES = Number(process.env.BENCH_WRITES ?? 2_000);
const CLIENTS = 32;

interface PhaseResult {
  phase: string;
  namespaces: number;
  memories: number;
  rssMb: number;
  /** Recall in the small tenants (null: none in the phase). */
  recallP50Ms: number | null;
  recallP99Ms: number | null;
  /** Recall in the large namespace (null: none in the phase). */
  bigRecallP50Ms: number | null;
  bigRecallP99Ms: number | null;
  writesPerSecond: number;
}

const quantile = (sorted: number[], q: number): number | null =>
  sorted.length === 0 ? null : +sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2);

type Phase = 'tenants' | 'single' | 'beside';

async function phase(kind: Phase): Promise<PhaseResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-tenants-'));
  const config = loadConfig({
    HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: join(dir, 'memory.db'), SERVICE_EMBEDDER: 'hash', SERVICE_RATE_LIMIT: '0',
    SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0', SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1',
  });
  const service = await startService(config, createLogger('silent'));
  const base = `http://127.0.0.1:${service.port}`;
  const tenants = Array.from({ length: TENANTS }, (_, i) => `tenant-${i}`);
  const namespaces = kind === 'tenants' ? tenants : kind === 'beside' ? ['big', ...tenants] : ['big'];
  const sizeOf = (ns: string) => (ns === 'big' ? BIG : PER_TENANT);
  // Recalls and writes go to these, in turn (beside: the large namespace every other time).
  const targets = kind === 'beside' ? tenants.flatMap((ns) => ['big', ns]) : namespaces;
  try {
    // Seed: every namespace's memories, 512 writer commands in flight.
    const jobs: [string, number][] = namespaces.flatMap((ns) => Array.from({ length: sizeOf(ns) }, (_, i): [string, number] => [ns, i]));
    let next = 0;
    await Promise.all(Array.from({ length: 512 }, async () => {
      while (next < jobs.length) {
        const [ns, i] = jobs[next++]!;
        await service.writer.send(ns, { type: 'remember', entity: `person-${i % 20}`, fact: `${ns} note ${i}: the parcel ${i * 13} left the depot on day ${i % 31}`, confidence: 0.8 });
        if (i % 64 === 0) service.backfill.poke(ns);
      }
    }));
    for (const ns of namespaces) service.backfill.poke(ns);
    await service.backfill.idle();
    await service.vectorIndexer.flush();

    const recallTimes: number[] = [];
    const bigRecallTimes: number[] = [];
    for (let i = 0; i < RECALLS; i++) {
      // A stride through the targets: tenant i * 7919 (a prime), so recalls spread over every tenant.
      const ns = targets[(i * 7919) % targets.length]!;
      const started = performance.now();
      const response = await fetch(`${base}/v1/recall`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'memory-namespace': ns },
        body: JSON.stringify({ query: `parcel ${i * 13} left the depot`, limit: 5 }),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`recall answered ${response.status}`);
      (ns === 'big' ? bigRecallTimes : recallTimes).push(performance.now() - started);
    }
    recallTimes.sort((a, b) => a - b);
    bigRecallTimes.sort((a, b) => a - b);
    const rssMb = process.memoryUsage().rss / 2 ** 20;

    let written = 0;
    const writeStart = performance.now();
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (written < WRITES) {
        const i = written++;
        const response = await fetch(`${base}/v1/remember`, {
          method: 'POST', headers: { 'content-type': 'application/json', 'memory-namespace': targets[(i * 7919) % targets.length]! },
          body: JSON.stringify({ entity: 'writer', fact: `fresh write ${i} of the bench` }),
        });
        await response.arrayBuffer();
        if (response.status !== 201) throw new Error(`remember answered ${response.status}`);
      }
    }));
    const writesPerSecond = WRITES / ((performance.now() - writeStart) / 1000);
    return {
      phase: kind === 'tenants' ? `${TENANTS} tenants × ${PER_TENANT}` : kind === 'beside' ? `1 × ${BIG} beside ${TENANTS} × ${PER_TENANT}` : `1 namespace × ${BIG}`,
      namespaces: namespaces.length, memories: namespaces.reduce((sum, ns) => sum + sizeOf(ns), 0), rssMb: Math.round(rssMb),
      recallP50Ms: quantile(recallTimes, 0.5), recallP99Ms: quantile(recallTimes, 0.99),
      bigRecallP50Ms: quantile(bigRecallTimes, 0.5), bigRecallP99Ms: quantile(bigRecallTimes, 0.99),
      writesPerSecond: Math.round(writesPerSecond),
    };
  } finally {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const requested = process.argv[2];
if (requested === 'tenants' || requested === 'single' || requested === 'beside') {
  process.stdout.write(`${JSON.stringify(await phase(requested))}\n`);
} else {
  // Each phase in its own process, one after the other (RSS is the phase's own).
  const results: PhaseResult[] = [];
  const baseline: (PhaseResult & { build: string })[] = [];
  const phases = (process.env.BENCH_PHASES ?? 'single,tenants,beside').split(',') as Phase[];
  const basePhases = (process.env.BENCH_BASE_PHASES ?? phases.join(',')).split(',');
  const run = (script: string, kind: Phase): PhaseResult => {
    const child = spawnSync(process.execPath, [script, kind], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
    if (child.status !== 0) throw new Error(`phase ${kind} of ${script} failed (exit ${child.status})`);
    return JSON.parse(child.stdout.trim().split('\n').pop()!);
  };
  for (const kind of phases) {
    results.push(run(fileURLToPath(import.meta.url), kind));
    if (process.env.BENCH_BASE_DIST && basePhases.includes(kind)) {
      baseline.push({ build: 'baseline', ...run(join(process.env.BENCH_BASE_DIST, 'bench', 'tenants.js'), kind) });
    }
  }
  console.table(baseline.length > 0 ? [...results.map((r) => ({ build: 'this build', ...r })), ...baseline] : results);
  const single = results[phases.indexOf('single')];
  const tenants = results[phases.indexOf('tenants')];
  const beside = results[phases.indexOf('beside')];
  const ratio = (a: number | null, b: number | null) => (a === null || b === null ? 'n/a' : `${(a / b).toFixed(2)}×`);
  if (single && beside) {
    process.stdout.write(`the large namespace beside the tenants / alone: recall p50 ${ratio(beside.bigRecallP50Ms, single.bigRecallP50Ms)}, ` +
      `p99 ${ratio(beside.bigRecallP99Ms, single.bigRecallP99Ms)}\n`);
  }
  if (tenants && beside) {
    process.stdout.write(`a small tenant beside the large namespace / the tenants alone: recall p50 ${ratio(beside.recallP50Ms, tenants.recallP50Ms)}, ` +
      `p99 ${ratio(beside.recallP99Ms, tenants.recallP99Ms)}\n`);
  }
  if (single && tenants) process.stdout.write(`many tenants / one namespace: RSS ${ratio(tenants.rssMb, single.rssMb)}, ` +
    `writes ${ratio(tenants.writesPerSecond, single.writesPerSecond)}\n`);
}
