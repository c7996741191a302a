// Does the embedding backlog drain while recalls keep the service busy? One SQLite service
// (default embedder, USE-lite; SERVICE_POOL_THREADS 2) per build and phase: remembers stream at
// a fixed pace while distinct-query recalls run at concurrency c, for BENCH_SECONDS (default 20).
// Per phase: facts written, vectors attached meanwhile (written − backlog growth), the backlog
// left at the end, and recall throughput and latency (the price of the embedding's share).
// `--baseline-dist <other build's dist>` measures that build in the same run, phases alternated.
// Usage: node dist/bench/backfill-under-load.js [--baseline-dist /work/main/dist]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startService } from './lib/processes.js';

const seconds = Number(process.env.BENCH_SECONDS?.trim() || '20');
const WRITES_PER_SECOND = 20;
const CONCURRENCIES = [4, 16];

interface Phase { build: string; c: number; written: number; attached: number; backlogEnd: number; recalls: number; p50: number; p99: number }

async function post(base: string, path: string, body: unknown): Promise<number> {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await r.arrayBuffer();
  return r.status;
}

async function backlog(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^memory_runtime_embedding_backlog (\d+)/m.exec(text)?.[1] ?? NaN);
}

async function phase(build: string, dist: string, c: number): Promise<Phase> {
  const dir = mkdtempSync(join(tmpdir(), 'memrt-bench-backfill-'));
  const service = await startService({
    dbPath: join(dir, 'memory.db'), embedder: 'use', main: join(dist, 'src/main.js'),
    env: { SERVICE_POOL_THREADS: '2', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0', SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1' },
  });
  const base = service.base;
  try {
    const startBacklog = await backlog(base);
    const until = performance.now() + seconds * 1000;
    let written = 0;
    const latencies: number[] = [];
    const writes = (async () => {
      for (let i = 0; performance.now() < until; i++) {
        const due = until - seconds * 1000 + (i * 1000) / WRITES_PER_SECOND;
        if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
        if ((await post(base, '/v1/remember', { entity: `member-${i % 50}`, fact: `Member ${i} keeps ${i % 7} bicycles and a ${['rake', 'kayak', 'ladder'][i % 3]} in shed ${i}` })) === 201) written++;
      }
    })();
    const recalls = Array.from({ length: c }, async (_, w) => {
      for (let i = w; performance.now() < until; i += c) {
        const t0 = performance.now();
        await post(base, '/v1/recall', { query: `what does member ${i % 50} keep in shed ${i.toString(36)}`, limit: 5 });
        latencies.push(performance.now() - t0);
      }
    });
    await Promise.all([writes, ...recalls]);
    const backlogEnd = await backlog(base);
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    return { build, c, written, attached: written - (backlogEnd - startBacklog), backlogEnd, recalls: latencies.length, p50: at(0.5), p99: at(0.99) };
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const at = process.argv.indexOf('--baseline-dist');
const builds: [string, string][] = [['this build', here]];
if (at !== -1) builds.push(['baseline', resolve(process.argv[at + 1]!)]);
const phases: Phase[] = [];
for (const c of CONCURRENCIES) for (const [name, dist] of builds) phases.push(await phase(name, dist, c));
console.log(`Embedding backfill under recall load: ${seconds} s per phase, remembers at ${WRITES_PER_SECOND}/s, SQLite, USE-lite, 2 recall threads`);
console.log('| build | recall c | facts written | vectors attached meanwhile | backlog at end | recalls/s | recall p50 ms | p99 ms |');
console.log('|---|---|---|---|---|---|---|---|');
for (const p of phases) {
  console.log(`| ${p.build} | ${p.c} | ${p.written} | ${p.attached} | ${p.backlogEnd} | ${(p.recalls / seconds).toFixed(1)} | ${p.p50.toFixed(1)} | ${p.p99.toFixed(1)} |`);
}
