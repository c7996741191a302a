// `npm run bench:entities -- --baseline-dist <dir>`: GET /v1/entities?q= at 100,000 entities
// (review of issue 15: ~95 ms on the interactive lane, a JavaScript call per row). This build's
// ReadStore.entities against another build's (`git worktree add <dir> <commit>` and build it
// there), on one database, the same queries, called in turn; medians per query.
// BENCH_ENTITIES (default 100000), BENCH_SAMPLES (default 40).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/shared/db.js';
import { ReadStore } from '../src/workers/sqlite/read-store.js';
import { seedDatabase } from './lib/seed.js';
import { fmt, table } from './lib/report.js';

const at = process.argv.indexOf('--baseline-dist');
if (at < 0 || !process.argv[at + 1]) throw new Error("usage: node dist/bench/entity-list.js --baseline-dist <other build's dist folder>");
const baselineDist = process.argv[at + 1]!;
const ENTITIES = Number(process.env.BENCH_ENTITIES ?? '100000');
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? '40');

const dir = mkdtempSync(join(tmpdir(), 'entity-list-'));
try {
  const path = join(dir, 'bench.db');
  await seedDatabase({ path, memories: 1_000, embedder: { id: 'hash-64', dimensions: 64 }, label: '(entity list)' });
  const writable = openDatabase(path, { readonly: false });
  const insert = writable.prepare("INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES (?, 1, ?, 'user', 0)");
  const firsts = ['Alice', 'bob', 'Carol', 'dave', 'Émile', 'Zoë', 'Mallory', 'trent', 'Ωmega', 'peggy'];
  // One name in ten carries a non-ASCII letter (É, ë, Ω): the case folding SQLite's lower() does not do.
  writable.transaction(() => {
    for (let i = 0; i < ENTITIES; i++) insert.run(randomUUID(), `${firsts[i % firsts.length]}-${String(i).padStart(6, '0')}-agent`);
  })();
  writable.close();

  const db = openDatabase(path, { readonly: true });
  const { ReadStore: BaselineStore } = await import(pathToFileURL(join(baselineDist, 'src', 'workers', 'sqlite', 'read-store.js')).href)
    .catch(() => import(pathToFileURL(join(baselineDist, 'src', 'workers', 'read-store.js')).href));
  const stores = { baseline: new BaselineStore(db, 1, 'default') as ReadStore, current: new ReadStore(db, 1, 'default') };
  const queries: [string, string | undefined][] = [
    ['no q', undefined], ["q='ali' (1 in 10)", 'ali'], ["q='émi' (non-ASCII)", 'émi'], ["q='00042' (10 match)", '00042'], ["q='zzz' (none)", 'zzz'],
  ];
  const rows: (string | number)[][] = [];
  for (const [label, q] of queries) {
    const input = { q, limit: 50, offset: 0 };
    const a = stores.baseline.entities(input);
    const b = stores.current.entities(input);
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${label}: the two builds answer differently`);
    const times: Record<'baseline' | 'current', number[]> = { baseline: [], current: [] };
    for (let i = 0; i < SAMPLES; i++) {
      for (const which of ['baseline', 'current'] as const) {
        const started = performance.now();
        stores[which].entities(input);
        times[which].push(performance.now() - started);
      }
    }
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const [before, after] = [median(times.baseline), median(times.current)];
    rows.push([label, fmt.int(b.total), fmt.ms(before), fmt.ms(after), `${(before / after).toFixed(1)}×`]);
  }
  console.log(table(`ReadStore.entities at ${ENTITIES.toLocaleString('en')} entities, limit 50, median of ${SAMPLES} (ms)`,
    ['query', 'total', 'baseline build', 'this build', 'speed-up'], rows));
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
