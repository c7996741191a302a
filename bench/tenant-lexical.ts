// bench:tenant-lexical (issue 25): the lexical signal of a large namespace beside many small ones,
// called directly (no HTTP, no embedder): what namespace-index.ts's copies cost and save. One file,
// BENCH_BIG memories in `big`, a second large namespace `mid` (BENCH_MID), BENCH_TENANTS × BENCH_PER_TENANT
// small ones. Each build measures on its own copy of the file, in a process of its own, with
// a reader and a writer connection: the first recall in `big` (a copy made), steady recalls,
// recalls each right after a delete + a new row + a cleared context in `big` (churn), recalls
// in small tenants, then `mid` and `big` in turn with one more large namespace (`mid-2`), and
// the temporary file's size before and after a small namespace takes a large one's place.
// BENCH_BASE_DIST names another build's dist/ (e.g. a worktree of main): both builds are
// measured in the same run, alternated BENCH_ROUNDS times (default 2).
//   node dist/bench/tenant-lexical.js
//   BENCH_BASE_DIST=/work/wt/base/dist flock /tmp/bench.lock node dist/bench/tenant-lexical.js
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const env = (name: string, fallback: number) => Number(process.env[name]?.trim() || fallback);
const BIG = env('BENCH_BIG', 100_000);
const MID = env('BENCH_MID', 20_000);
const TENANTS = env('BENCH_TENANTS', 1000);
const PER_TENANT = env('BENCH_PER_TENANT', 100);
const QUERIES = env('BENCH_QUERIES', 20);
const CHURN = env('BENCH_CHURN', 10);
const ROUNDS = env('BENCH_ROUNDS', 2);
const VOCABULARY = ('apricot orchard harvest river market canal morning tractor ladder basket window garden kitchen doctor ' +
  'teacher violin guitar football weekend holiday sister brother mother father coffee tea bread cheese winter summer').split(' ');
const QUESTIONS = [['parcel', '1300', 'left', 'depot'], ['apricot', 'garden'], ['violin', 'sister', 'weekend'], ['note', '77', 'harvest']];
const THIS_DIST = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface Measured {
  firstMs: number;
  steadyP50Ms: number;
  steadyMaxMs: number;
  churnP50Ms: number;
  churnMaxMs: number;
  smallP50Ms: number;
  smallMaxMs: number;
  switchP50Ms: number;
  switchMaxMs: number;
  tempMbPeak: number;
  tempMbAfter: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number) => +x.toFixed(2);

/** A deterministic text: the bench:tenants template and a few words of a small vocabulary. */
function textOf(ns: string, i: number): string {
  let s = (i * 2654435761 + ns.length * 97) % 2147483648;
  const next = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const words = Array.from({ length: 1 + Math.floor(next() * 8) }, () => VOCABULARY[Math.floor(next() * VOCABULARY.length)]);
  return `${ns} note ${i}: the parcel ${i * 13} left the depot on day ${i % 31} ${words.join(' ')}`;
}

async function seed(path: string): Promise<void> {
  const { openDatabase } = await import('../src/shared/db.js');
  const { ensureNamespace, migrate } = await import('../src/writer/sqlite/migrate.js');
  const db = openDatabase(path, { readonly: false, synchronous: 'NORMAL' });
  db.pragma('synchronous = OFF');
  migrate(db);
  const insert = db.prepare(`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, context, confidence,
    stability, difficulty, last_access_at, created_at, extraction_tier, embedded, archived)
    VALUES (?, ?, ?, ?, ?, ?, 1, 1, 5, 0, 0, 1, 0, 0)`);
  const sizes: [string, number][] = [['big', BIG], ['mid', MID], ['mid-2', MID], ...Array.from({ length: TENANTS }, (_, t): [string, number] => [`tenant-${t}`, PER_TENANT])];
  for (const [ns, count] of sizes) {
    const id = ensureNamespace(db, ns);
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        const text = textOf(ns, i);
        // Every tenth row is a turn with its previous turn as context (the edit churn clears).
        insert.run(`${ns}-${i}`, id, i % 3 === 0 ? 'episodic' : 'semantic', text, text, i % 10 === 0 ? textOf(ns, i + 7) : '');
      }
    })();
  }
  db.close();
}

/** In a process of its own: one build's lexical signal on `path` (a copy of the seeded file). */
async function measure(dist: string, path: string): Promise<Measured> {
  const { openDatabase } = await import(join(dist, 'src/shared/db.js'));
  const { Bm25Signal } = await import(join(dist, 'src/workers/sqlite/lexical.js'));
  const writer = openDatabase(path, { readonly: false });
  const reader = openDatabase(path, { readonly: true });
  const idOf = (ns: string): number => reader.prepare('SELECT id FROM namespaces WHERE name = ?').pluck().get(ns);
  const signals = new Map<string, { retrieve(ctx: unknown): unknown[] }>();
  const signal = (ns: string) => signals.get(ns) ?? signals.set(ns, new Bm25Signal(reader, idOf(ns))).get(ns)!;
  // As a recall runs it: inside one read transaction.
  const timed = (ns: string, terms: string[]): number => {
    const started = performance.now();
    reader.exec('BEGIN');
    try {
      const hits = signal(ns).retrieve({ terms, depth: 40, filter: { entityId: null, types: null, after: null, before: null } });
      if (hits.length === 0) throw new Error(`no hits in ${ns} for ${terms.join(' ')}`);
    } finally {
      reader.exec('COMMIT');
    }
    return performance.now() - started;
  };
  const tempMb = () => (reader.pragma('temp.page_count', { simple: true }) as number) * (reader.pragma('temp.page_size', { simple: true }) as number) / 2 ** 20;
  const question = (i: number) => QUESTIONS[i % QUESTIONS.length]!;

  const firstMs = timed('big', question(0));
  const steady = Array.from({ length: QUERIES }, (_, i) => timed('big', question(i + 1)));
  const big = idOf('big');
  const churn: number[] = [];
  for (let i = 0; i < CHURN; i++) {
    writer.prepare('DELETE FROM memories WHERE rowid = (SELECT rowid FROM memories WHERE namespace_id = ? ORDER BY rowid LIMIT 1 OFFSET ?)').run(big, 1000 + i * 997);
    writer.prepare(`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty,
      last_access_at, created_at, extraction_tier, embedded, archived) VALUES (?, ?, 'semantic', ?, ?, 1, 1, 5, 0, 0, 1, 0, 0)`)
      .run(`churn-${i}`, big, textOf('big', BIG + i), textOf('big', BIG + i));
    writer.prepare("UPDATE memories SET context = '' WHERE rowid = (SELECT rowid FROM memories WHERE namespace_id = ? AND context != '' ORDER BY rowid LIMIT 1)").run(big);
    churn.push(timed('big', question(i)));
  }
  const small = Array.from({ length: QUERIES }, (_, i) => timed(`tenant-${(i * 7919) % TENANTS}`, question(i)));
  // Three large namespaces in turn (two slots): each takes the least recently ranked one's place.
  const switches = Array.from({ length: 6 }, (_, i) => timed(['mid', 'mid-2', 'big'][i % 3]!, question(i)));
  const tempMbPeak = tempMb();
  // Small ones take the large slots' places? No: they share their own slot. The large slots are
  // refilled by the mids, the big copy's pages given back.
  timed('mid', question(1));
  timed('mid-2', question(2));
  const tempMbAfter = tempMb();
  reader.close();
  writer.close();
  return {
    firstMs: round(firstMs), steadyP50Ms: round(median(steady)), steadyMaxMs: round(Math.max(...steady)),
    churnP50Ms: round(median(churn)), churnMaxMs: round(Math.max(...churn)),
    smallP50Ms: round(median(small)), smallMaxMs: round(Math.max(...small)),
    switchP50Ms: round(median(switches)), switchMaxMs: round(Math.max(...switches)),
    tempMbPeak: round(tempMbPeak), tempMbAfter: round(tempMbAfter),
  };
}

if (process.argv[2] === 'measure') {
  process.stdout.write(`${JSON.stringify(await measure(process.argv[3]!, process.argv[4]!))}\n`);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'bench-tenant-lexical-'));
  try {
    const seeded = join(dir, 'seeded.db');
    let started = performance.now();
    await seed(seeded);
    process.stderr.write(`seeded ${BIG} + 2 × ${MID} + ${TENANTS} × ${PER_TENANT} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    const builds: [string, string][] = [['this build', THIS_DIST]];
    if (process.env.BENCH_BASE_DIST) builds.unshift(['baseline', resolve(process.env.BENCH_BASE_DIST)]);
    const rows: Record<string, unknown>[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const [label, dist] of builds) {
        const path = join(dir, `run.db`);
        copyFileSync(seeded, path);
        started = performance.now();
        const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), 'measure', dist, path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
        if (run.status !== 0) throw new Error(`${label} failed (exit ${run.status})`);
        rows.push({ build: label, round: r + 1, ...JSON.parse(run.stdout.trim().split('\n').pop()!) });
        for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
      }
    }
    console.table(rows);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
