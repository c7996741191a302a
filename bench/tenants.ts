// bench:tenants (issue 25): many small tenants in one process beside one large namespace, in
// the same run, each phase in a process of its own (so RSS is that phase's): the resident memory
// once seeded, embedded and indexed; recall latency p50/p99 through HTTP (small tenants: a random
// tenant per recall, named by the Memory-Namespace header); and HTTP write throughput (remember,
// 32 clients; small tenants: a random tenant per write). A third phase puts the large namespace
// beside the small tenants and recalls only in the large one: its lexical ranking then takes the
// namespace's own statistics (workers/sqlite/namespace-bm25.ts), which this phase prices.
//   npm run bench:tenants                       short run: 100 tenants × 100 beside one of 10,000
//   BENCH_TENANTS=1000 BENCH_BIG=100000 npm run bench:tenants     the sizes
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
  recallP50Ms: number;
  recallP99Ms: number;
  writesPerSecond: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

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
  // Recalls and writes go to these.
  const targets = kind === 'beside' ? ['big'] : namespaces;
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
    for (let i = 0; i < RECALLS; i++) {
      const ns = targets[i % targets.length]!;
      const started = performance.now();
      const response = await fetch(`${base}/v1/recall`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'memory-namespace': ns },
        body: JSON.stringify({ query: `parcel ${i * 13} left the depot`, limit: 5 }),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`recall answered ${response.status}`);
      recallTimes.push(performance.now() - started);
    }
    recallTimes.sort((a, b) => a - b);
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
      phase: kind === 'tenants' ? `${TENANTS} tenants × ${PER_TENANT}` : kind === 'beside' ? `1 × ${BIG} beside the tenants (recall in it)` : `1 namespace × ${BIG}`,
      namespaces: namespaces.length, memories: namespaces.reduce((sum, ns) => sum + sizeOf(ns), 0), rssMb: Math.round(rssMb),
      recallP50Ms: +quantile(recallTimes, 0.5).toFixed(2), recallP99Ms: +quantile(recallTimes, 0.99).toFixed(2),
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
  const phases = (process.env.BENCH_PHASES ?? 'single,tenants,beside').split(',') as Phase[];
  for (const kind of phases) {
    const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), kind], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
    if (run.status !== 0) throw new Error(`phase ${kind} failed (exit ${run.status})`);
    results.push(JSON.parse(run.stdout.trim().split('\n').pop()!));
  }
  console.table(results);
  const single = results[phases.indexOf('single')];
  const tenants = results[phases.indexOf('tenants')];
  const beside = results[phases.indexOf('beside')];
  if (single && beside) {
    process.stdout.write(`one namespace beside the tenants / alone: recall p50 ${(beside.recallP50Ms / single.recallP50Ms).toFixed(2)}×, ` +
      `p99 ${(beside.recallP99Ms / single.recallP99Ms).toFixed(2)}×, writes ${(beside.writesPerSecond / single.writesPerSecond).toFixed(2)}×\n`);
  }
  if (single && tenants) process.stdout.write(`many tenants / one namespace: RSS ${(tenants.rssMb / single.rssMb).toFixed(2)}×, recall p50 ${(tenants.recallP50Ms / single.recallP50Ms).toFixed(2)}×, ` +
    `p99 ${(tenants.recallP99Ms / single.recallP99Ms).toFixed(2)}×, writes ${(tenants.writesPerSecond / single.writesPerSecond).toFixed(2)}×\n`);
}
