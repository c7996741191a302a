// `npm run bench:pool-threads`: does recall throughput grow with pool threads, and how close is
// it to what the cores allow? On 5,000 memories (USE-lite identity, stand-in vectors) the service
// runs with SERVICE_POOL_THREADS = 1, 2 and 4; wrk sends distinct recalls (no cache answers one)
// at c=16. Beside each round, one recall's raw stages are timed in this process, one at a time
// (query embedding, then the ranking reads): ideal req/s = min(threads, cores) × 1000 / raw ms.
// With BENCH_BASELINE_MAIN=<other build>/dist/src/main.js, that build at its default thread count
// is measured in the same run (c=16 throughput and idle c=4 p99) beside this one at its default.
import { availableParallelism, tmpdir } from 'node:os';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { UseLiteEmbedder } from '../src/workers/embedding/use-lite.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { Corpus } from './lib/corpus.js';
import { note } from './lib/progress.js';
import { startService } from './lib/processes.js';
import { fmt, machine, table, writeResults } from './lib/report.js';
import { seedDatabase } from './lib/seed.js';
import { runWrk, writeScript, wrkAvailable, type WrkResult } from './lib/wrk.js';

const MEMORIES = 5_000;
const seconds = Number(process.env.BENCH_THREADS_SECONDS?.trim() || '10');
const THREADS = (process.env.BENCH_THREADS?.trim() || '1,2,4').split(',').map(Number);
const baselineMain = process.env.BENCH_BASELINE_MAIN?.trim() || null;
const cores = availableParallelism();

class Queries {
  private readonly corpus = new Corpus(13, 250);
  private readonly seen = new Set<string>();
  next(n: number): string[] {
    const out: string[] = [];
    while (out.length < n) {
      const query = this.corpus.query();
      if (this.seen.has(query)) continue;
      this.seen.add(query);
      out.push(query);
    }
    return out;
  }
}

/** One recall's stages, one at a time, in this process: what a pool thread does per request. */
async function rawCost(dbPath: string, use: UseLiteEmbedder, queries: string[]): Promise<{ embed: number; rank: number; total: number }> {
  const db = openDatabase(dbPath, { readonly: true });
  try {
    const engine = new RecallEngine(new SqliteReadPort(db, 1, 'default', { minSimilarity: 0.45 }));
    const recall = (query: string, queryVector: Float32Array) => engine.recall({ query, entity: null, types: null, limit: 10, queryVector });
    for (const q of queries.slice(0, 20)) await recall(q, (await use.embed([q]))[0]);
    let embed = 0;
    let rank = 0;
    const measured = queries.slice(20);
    for (const query of measured) {
      const t0 = performance.now();
      const [vector] = await use.embed([query]);
      const t1 = performance.now();
      await recall(query, vector);
      rank += performance.now() - t1;
      embed += t1 - t0;
    }
    return { embed: embed / measured.length, rank: rank / measured.length, total: (embed + rank) / measured.length };
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  if (!(await wrkAvailable())) throw new Error('bench:pool-threads needs wrk (apt-get install wrk)');
  const workDir = mkdtempSync(join(tmpdir(), 'bench-threads-'));
  try {
    const seeded = join(workDir, 'seeded.db');
    await seedDatabase({ path: seeded, memories: MEMORIES, embedder: { id: 'use-lite-512', dimensions: 512 }, label: '(pool threads)' });
    const script = writeScript(workDir);
    const queries = new Queries();
    const bodies = (name: string, n: number) => {
      const path = join(workDir, `${name}.jsonl`);
      writeFileSync(path, `${queries.next(n).map((query) => JSON.stringify({ query, limit: 10 })).join('\n')}\n`);
      return path;
    };
    const use = await UseLiteEmbedder.load();
    const run = async (label: string, env: Record<string, string>, main?: string) => {
      const dbPath = join(workDir, `${label.replace(/\W+/g, '-')}.db`);
      copyFileSync(seeded, dbPath);
      const service = await startService({ dbPath, embedder: 'use', main, env: { SERVICE_RATE_LIMIT: '0', ...env } });
      try {
        const at = (connections: number, title: string, secs = seconds): Promise<WrkResult> =>
          runWrk(script, { title: `${label}: ${title}`, base: service.base, route: '/v1/recall', connections, seconds: secs, bodiesFile: bodies(`${label}-${title}`.replace(/\W+/g, '-'), 20_000) });
        await at(16, 'warm-up', 3);
        const idle = await at(4, 'c=4');
        const c16 = await at(16, 'c=16');
        return { label, idle, c16, raw: await rawCost(dbPath, use, queries.next(120)), rssMb: service.memory().rssMb };
      } finally {
        await service.stop();
        for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
      }
    };
    const builds = [];
    if (baselineMain) builds.push(await run('baseline (default threads)', {}, baselineMain));
    builds.push(await run('this build (default threads)', {}));
    const sweep = [];
    for (const threads of THREADS) sweep.push({ threads, ...(await run(`${threads} thread${threads > 1 ? 's' : ''}`, { SERVICE_POOL_THREADS: String(threads) })) });

    console.log(table(`Recall, ${MEMORIES} memories, USE-lite, distinct queries (${seconds} s phases, ${cores} cores)`,
      ['build', 'c=16 req/s', 'c=16 p50', 'c=16 p99', 'c=4 req/s', 'c=4 p99', 'raw embed ms', 'raw rank ms', 'RSS MiB'],
      builds.map((b) => [b.label, fmt.rate(b.c16.rps), fmt.ms(b.c16.p50), fmt.ms(b.c16.p99), fmt.rate(b.idle.rps), fmt.ms(b.idle.p99), fmt.ms(b.raw.embed), fmt.ms(b.raw.rank), fmt.int(b.rssMb)])));
    console.log(table(`Recall at c=16 by SERVICE_POOL_THREADS (ideal = min(threads, ${cores} cores) × 1000 / raw ms of the same round)`,
      ['threads', 'req/s', 'p50', 'p99', 'raw embed ms', 'raw rank ms', 'ideal req/s', 'of ideal', 'errors'],
      sweep.map((s) => {
        const ideal = (Math.min(s.threads, cores) * 1000) / s.raw.total;
        return [s.threads, fmt.rate(s.c16.rps), fmt.ms(s.c16.p50), fmt.ms(s.c16.p99), fmt.ms(s.raw.embed), fmt.ms(s.raw.rank), fmt.rate(ideal), fmt.pct(s.c16.rps / ideal), s.c16.errors];
      })));
    note(`results: ${writeResults('pool-threads', { machine: machine(), seconds, builds, sweep }).join(', ')}`);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
