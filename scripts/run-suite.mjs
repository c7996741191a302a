// The test runner behind `npm test` (scripts/test.mjs) and `npm run test:postgres`
// (scripts/test-postgres.mjs): node:test's run() over the SQLite suite and, at the same time, the
// HTTP suite on PostgreSQL, each a pool of files started slowest first.
//
// Why both at once: most files spend much of their time waiting (service start-ups, child
// processes, PostgreSQL, timers), and one suite after the other ended each in a tail where one
// long file ran alone. Why slowest first: `node --test` sorts the files by name, which started
// the longest files (postgres-*, online-restore) half-way through; started first, they overlap
// the many short ones. Each suite's report is printed whole (the PostgreSQL one after the
// SQLite one, kept until then), with its own totals.
//
// The PostgreSQL runs: a private primary and a `pg_basebackup -R` replica (test/support/postgres.ts)
// for the whole run; each file runs through a two-line wrapper (in a temp folder) that sets
// TEST_BACKEND=postgres before importing it, so startTestService gives each service a fresh
// database there and reads recall from the replica (test/support/test-backend.ts). The SQLite
// files see the clusters' URLs in their env but read them only under TEST_BACKEND.
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { postgresUnavailable, startPrimary, startReplica } from '../dist/test/support/postgres.js';

const TEST_DIR = fileURLToPath(new URL('../dist/test/', import.meta.url));

/**
 * Files at once in each pool (docs/testing.md, "CI time": measured on 2 cores).
 * TEST_CONCURRENCY and TEST_POSTGRES_CONCURRENCY override them.
 */
export const CONCURRENCY = { sqlite: 3, postgres: 2 };

/**
 * The longest files, longest first, from the per-file times each run prints at its end (the SQLite
 * suite's and the PostgreSQL one's together: a name counts for both); every other file follows in
 * name order. Only the order depends on this list: a file missing from it still runs.
 */
const SLOWEST_FIRST = [
  'postgres-deletion', 'postgres-job-locks', 'postgres-failover', 'online-restore', 'early-answer', 'deletion-races',
  'entity-exclusion', 'postgres-read-your-writes', 'http-edges', 'backfill-under-recall-load', 'deletion-chunked',
];

const order = (names) => {
  const rank = (name) => (SLOWEST_FIRST.includes(name) ? SLOWEST_FIRST.indexOf(name) : SLOWEST_FIRST.length);
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
};

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/**
 * One pool: runs `files` ({ name, path }) `concurrency` at a time, writing its report through
 * `write`; resolves to its tally, failures and per-file times.
 */
async function pool(title, files, concurrency, signal, write) {
  const started = Date.now();
  const names = new Map(files.map((file) => [file.path, file.name]));
  const tally = { pass: 0, fail: 0, skipped: 0, todo: 0 };
  const failed = [];
  /** name -> [dequeued, last result]: the test events carry the path of the module that declared the test. */
  const spans = new Map();
  const nameOf = (path) => names.get(path) ?? path.slice(path.lastIndexOf('/') + 1).replace(/\.test\.js$/, '');
  const stream = run({ files: files.map((file) => file.path), concurrency, signal });
  stream.on('test:dequeue', (data) => {
    if (data.nesting === 0 && data.name === data.file) spans.set(nameOf(data.file), [Date.now(), Date.now()]);
  });
  for (const type of ['test:pass', 'test:fail']) {
    stream.on(type, (data) => {
      const name = nameOf(data.file ?? '');
      const span = spans.get(name);
      if (span) span[1] = Date.now();
      if (data.details?.type === 'suite') return;
      if (type === 'test:fail' && data.todo === undefined) {
        tally.fail++;
        failed.push(`${title} ${name}: ${data.name}`);
      } else if (data.todo !== undefined) tally.todo++;
      else if (data.skip !== undefined) tally.skipped++;
      else tally.pass++;
    });
  }
  const reported = stream.compose(process.stdout.isTTY ? new spec() : tap);
  for await (const chunk of reported) write(chunk);
  return { title, tally, failed, spans, ms: Date.now() - started };
}

/**
 * Runs `sqlite` and `postgres` (test file names without `.test.js`) and resolves to the exit code:
 * 0 when no test failed. The PostgreSQL runs are skipped with a message where PostgreSQL cannot
 * start (a failure under POSTGRES_REQUIRED=1: postgresUnavailable throws).
 */
export async function runSuite({ sqlite = [], postgres = [] }) {
  const started = Date.now();
  const concurrency = {
    sqlite: Number(process.env.TEST_CONCURRENCY) || CONCURRENCY.sqlite,
    postgres: Number(process.env.TEST_POSTGRES_CONCURRENCY) || CONCURRENCY.postgres,
  };
  let primary = null;
  let replica = null;
  let wrappers = null;
  const stopClusters = async () => {
    await replica?.stop();
    await primary?.stop();
    if (wrappers) rmSync(wrappers, { recursive: true, force: true });
  };
  const abort = new AbortController();
  // A Ctrl-C reaches the whole process group, but a supervisor's SIGTERM (a CI timeout) reaches
  // only this process: end the test files' processes, then stop both clusters whatever happens.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      abort.abort();
      void stopClusters().then(() => process.exit(130));
    });
  }

  const pools = [];
  try {
    if (postgres.length > 0) {
      const unavailable = postgresUnavailable(); // throws under POSTGRES_REQUIRED=1 (.ci/run)
      if (unavailable) {
        console.log(`# HTTP suite on PostgreSQL skipped: ${unavailable}`);
        postgres = [];
      } else {
        primary = await startPrimary();
        replica = await startReplica(primary);
        process.env.TEST_POSTGRES_URL = primary.url;
        process.env.TEST_POSTGRES_READ_URL = replica.url;
        wrappers = mkdtempSync(join(tmpdir(), 'memrt-on-postgres-'));
      }
    }
    const wrapped = order(postgres).map((name) => {
      const path = join(wrappers, `${name}.test.mjs`);
      const target = pathToFileURL(join(TEST_DIR, `${name}.test.js`)).href;
      writeFileSync(path, `process.env.TEST_BACKEND = 'postgres';\nawait import(${JSON.stringify(target)});\n`);
      return { name, path };
    });
    const direct = order(sqlite).map((name) => ({ name, path: join(TEST_DIR, `${name}.test.js`) }));
    if (direct.length > 0) console.log(`# SQLite: ${direct.length} files, ${concurrency.sqlite} at a time, slowest first`);
    if (wrapped.length > 0) {
      console.log(`# HTTP suite on PostgreSQL: primary :${primary.port}, replica :${replica.port}, ${wrapped.length} files, ${concurrency.postgres} at a time`
        + `${direct.length > 0 ? ' beside the SQLite suite (its report follows that one)' : ''}`);
    }
    // The SQLite report goes out as it comes; the PostgreSQL one waits for it, then follows live.
    let held = direct.length > 0 ? [] : null;
    const live = (chunk) => process.stdout.write(chunk);
    // A pool whose runner itself failed counts as a failure; the other pool still runs to its end.
    const settle = (title, running) => running.catch((error) => ({ title, tally: { pass: 0, fail: 1, skipped: 0, todo: 0 }, failed: [`${title}: the runner failed: ${error?.stack ?? error}`], spans: new Map(), ms: 0 }));
    const sqliteRun = direct.length > 0 ? settle('SQLite', pool('SQLite', direct, concurrency.sqlite, abort.signal, live)) : null;
    const postgresRun = wrapped.length > 0 ? settle('PostgreSQL', pool('PostgreSQL', wrapped, concurrency.postgres, abort.signal, (chunk) => (held ? held.push(chunk) : live(chunk)))) : null;
    if (sqliteRun) pools.push(await sqliteRun);
    if (held) for (const chunk of held) live(chunk);
    held = null;
    if (postgresRun) pools.push(await postgresRun);
  } finally {
    await stopClusters();
  }

  const failed = [];
  for (const { title, tally, failed: failures, spans, ms } of pools) {
    const slowest = [...spans].map(([name, [first, last]]) => [name, last - first]).sort((a, b) => b[1] - a[1]).slice(0, 15);
    console.log(`# ${title}: ${tally.pass} pass, ${tally.fail} fail, ${tally.skipped} skipped, ${tally.todo} todo, ${seconds(ms)}; slowest files: ${slowest.map(([name, span]) => `${name} ${seconds(span)}`).join(', ')}`);
    failed.push(...failures);
  }
  for (const line of failed) console.log(`# FAILED ${line}`);
  console.log(`# ${failed.length === 0 ? 'passed' : 'FAILED'} in ${seconds(Date.now() - started)}`);
  return failed.length === 0 ? 0 : 1;
}
