// Recall latency of this build against another build, measured alternately in one process.
//
// On a shared machine two separate bench runs differ by more than the change being measured
// (p50 ×1.40 between runs of the same pair of builds, ×1.10 when alternated). So both services
// run side by side, each with its own fresh store holding the same conversation, and every
// question is asked of both back to back — this build first on even questions, the other one
// first on odd ones — so load drifts hit both alike. Two passes in order over every question,
// embedding backlog drained, concurrency 1, client-side latency (query embedding included).
//
// The other build is any `dist/` folder built from another commit:
//   git worktree add --detach ../baseline <commit> && cd ../baseline && npm ci && npm run build
//   npm run bench:quality -- locomo --baseline-dist ../baseline/dist
// (a worktree with the same package-lock.json may symlink node_modules instead of `npm ci`).
// Prints p50/p95 of each and their ratio, plus R@1/5/10 of each for the same questions.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startService, type ServerProcess } from '../lib/processes.js';
import type { BenchEmbedder } from './synthetic.js';
import { loadLocomo, locomoPath, type Conversation } from './locomo-data.js';
import { drain, key, storeConversation, type Ask } from './locomo.js';
import { percentile, scoreHeader, scoreLine, scoreRankings } from './scoring.js';

const PASSES = 2;

interface Side {
  name: string;
  main: string | undefined;
  ranked: Map<string, string[]>;
  latencies: number[];
}

async function withService<T>(main: string | undefined, embedder: BenchEmbedder, use: (server: ServerProcess, dbPath: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'locomo-ab-'));
  const dbPath = join(dir, 'memory.db');
  const server = await startService({ dbPath, embedder, main });
  try {
    return await use(server, dbPath);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function compareOn(conversation: Conversation, sides: [Side, Side], embedder: BenchEmbedder): Promise<void> {
  await withService(sides[0].main, embedder, (a, aPath) =>
    withService(sides[1].main, embedder, async (b, bPath) => {
      const asks: [Ask, Ask] = await Promise.all([storeConversation(a.base, aPath, conversation), storeConversation(b.base, bPath, conversation)]);
      await Promise.all([drain(a.base), drain(b.base)]);
      for (let pass = 0; pass < PASSES; pass++) {
        for (const q of conversation.questions) {
          const order = q.index % 2 === 0 ? [0, 1] : [1, 0];
          for (const s of order) {
            const { ids, ms } = await asks[s](q.index);
            sides[s].latencies.push(ms);
            if (pass === 0) sides[s].ranked.set(key(conversation, q.index), ids);
          }
        }
      }
    }),
  );
}

export async function runLatencyComparison(baselineDist: string, embedder: BenchEmbedder): Promise<void> {
  const baselineMain = join(resolve(baselineDist), 'src', 'main.js');
  if (!existsSync(baselineMain)) throw new Error(`--baseline-dist: no ${baselineMain} (build the other commit with npm run build first)`);
  const conversations = loadLocomo();
  if (!conversations) {
    console.log(`LoCoMo latency comparison skipped: no data set at ${locomoPath()} (set BENCH_LOCOMO_DIR to its folder).`);
    return;
  }
  const sides: [Side, Side] = [
    { name: 'this build', main: undefined, ranked: new Map(), latencies: [] },
    { name: `baseline ${baselineDist}`, main: baselineMain, ranked: new Map(), latencies: [] },
  ];
  for (const [i, conversation] of conversations.entries()) {
    process.stderr.write(`[bench] locomo A/B conversation ${i + 1}/${conversations.length}\n`);
    await compareOn(conversation, sides, embedder);
  }
  const evidence = new Map(conversations.flatMap((c) => c.questions.map((q) => [key(c, q.index), new Set(q.evidence)] as const)));
  console.log(`\nRecall latency, this build vs another, asked alternately — LoCoMo dev: ${evidence.size} questions × ${PASSES} passes; embedder ${embedder}; c=1, drained, client side`);
  console.log(scoreHeader('build', 40));
  for (const s of sides) console.log(scoreLine(s.name, scoreRankings(s.ranked, evidence), 40));
  const [p50, p95] = [50, 95].map((p) => sides.map((s) => percentile(s.latencies, p)));
  for (const [i, s] of sides.entries()) console.log(`${s.name.padEnd(40)} p50 ${p50[i].toFixed(2)} ms, p95 ${p95[i].toFixed(2)} ms over ${s.latencies.length} requests`);
  console.log(`this build ÷ baseline: p50 ×${(p50[0] / p50[1]).toFixed(2)}, p95 ×${(p95[0] / p95[1]).toFixed(2)}`);
}
