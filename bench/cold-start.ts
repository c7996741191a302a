// `npm run bench:cold-start`: is recall as fast in its first seconds after a start as later?
// A store of 5,000 memories (USE-lite identity, stand-in vectors: the cost of a KNN depends on
// count and dimension only) is copied fresh for every start; the service starts with the default
// embedder, and as soon as it listens one recall is timed (a newcomer's first), then wrk sends
// distinct recalls at c=4 for BENCH_COLD_SECONDS (the cold phase) and again as long (warm).
// The target (issue 27): the cold phase's p99 within 1.5× of the warm phase's.
//
// BENCH_BASELINE_MAIN=<other build>/dist/src/main.js measures that build the same way in the same
// run (starts alternate, BENCH_COLD_ROUNDS rounds each), e.g. a worktree of main.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Corpus } from './lib/corpus.js';
import { note } from './lib/progress.js';
import { startService } from './lib/processes.js';
import { fmt, machine, table, writeResults } from './lib/report.js';
import { seedDatabase } from './lib/seed.js';
import { runWrk, writeScript, wrkAvailable, type WrkResult } from './lib/wrk.js';

const MEMORIES = 5_000;
const seconds = Number(process.env.BENCH_COLD_SECONDS?.trim() || '10');
const rounds = Number(process.env.BENCH_COLD_ROUNDS?.trim() || '1');
const baselineMain = process.env.BENCH_BASELINE_MAIN?.trim() || null;
const TARGET = 1.5;

interface ColdRun {
  build: string;
  /** From spawning the process to its "listening" line. */
  startMs: number;
  firstRecallMs: number;
  cold: WrkResult;
  warm: WrkResult;
  rssMb: number;
}

/** Distinct recall bodies: no query repeats within the run, so no cache answers one. */
class Queries {
  private readonly corpus = new Corpus(11, 250);
  private readonly seen = new Set<string>();
  next(n: number): string[] {
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

async function measure(build: string, main: string | undefined, seeded: string, workDir: string, script: string, queries: Queries): Promise<ColdRun> {
  const dbPath = join(workDir, `${build}-${Date.now()}.db`);
  copyFileSync(seeded, dbPath);
  const bodies = (name: string, n: number) => {
    const path = join(workDir, `${name}.jsonl`);
    writeFileSync(path, `${queries.next(n).join('\n')}\n`);
    return path;
  };
  const coldBodies = bodies(`${build}-cold`, 20_000);
  const warmBodies = bodies(`${build}-warm`, 20_000);
  const [first] = queries.next(1);
  const started = performance.now();
  const service = await startService({ dbPath, embedder: 'use', main, env: { SERVICE_RATE_LIMIT: '0' } });
  const startMs = performance.now() - started;
  try {
    const t0 = performance.now();
    const response = await fetch(`${service.base}/v1/recall`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: first });
    await response.arrayBuffer();
    const firstRecallMs = performance.now() - t0;
    const cold = await runWrk(script, { title: `${build}: first ${seconds} s`, base: service.base, route: '/v1/recall', connections: 4, seconds, bodiesFile: coldBodies });
    const warm = await runWrk(script, { title: `${build}: next ${seconds} s`, base: service.base, route: '/v1/recall', connections: 4, seconds, bodiesFile: warmBodies });
    return { build, startMs, firstRecallMs, cold, warm, rssMb: service.memory().rssMb };
  } finally {
    await service.stop();
    for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
  }
}

async function main(): Promise<void> {
  if (!(await wrkAvailable())) throw new Error('bench:cold-start needs wrk (apt-get install wrk)');
  const workDir = mkdtempSync(join(tmpdir(), 'bench-cold-'));
  try {
    const seeded = join(workDir, 'seeded.db');
    await seedDatabase({ path: seeded, memories: MEMORIES, embedder: { id: 'use-lite-512', dimensions: 512 }, label: '(cold start)' });
    const script = writeScript(workDir);
    const queries = new Queries();
    const runs: ColdRun[] = [];
    for (let round = 0; round < rounds; round++) {
      if (baselineMain) runs.push(await measure('baseline', baselineMain, seeded, workDir, script, queries));
      runs.push(await measure('this build', undefined, seeded, workDir, script, queries));
    }
    const rows = runs.map((r) => [
      r.build, fmt.int(r.startMs), fmt.ms(r.firstRecallMs),
      fmt.rate(r.cold.rps), fmt.ms(r.cold.p50), fmt.ms(r.cold.p99),
      fmt.rate(r.warm.rps), fmt.ms(r.warm.p50), fmt.ms(r.warm.p99),
      fmt.ratio(r.cold.p99 / r.warm.p99), r.cold.p99 <= TARGET * r.warm.p99 ? 'met' : 'NOT met', r.cold.errors + r.warm.errors, fmt.int(r.rssMb),
    ]);
    console.log(table(`Recall at c=4 right after a start, ${MEMORIES} memories, USE-lite (${seconds} s phases)`,
      ['build', 'start ms', '1st recall ms', 'cold req/s', 'cold p50', 'cold p99', 'warm req/s', 'warm p50', 'warm p99', 'cold/warm p99', `≤ ${TARGET}×`, 'errors', 'RSS MiB'], rows));
    note(`results: ${writeResults('cold-start', { machine: machine(), seconds, runs }).join(', ')}`);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
