// The test runner behind `npm test` (scripts/test.mjs) and `npm run test:postgres`
// (scripts/test-postgres.mjs): the SQLite suite and the HTTP suite on PostgreSQL in one pool of
// test files, each file a `node --test-reporter=tap <file>` process of its own (as `node --test`
// runs them), the slowest files first, each in a session of its own.
//
// Why one pool: most files spend much of their time waiting (service start-ups, child processes,
// PostgreSQL, timers); the suites one after the other each ended in a tail where one long file ran
// alone. Why slowest first: `node --test` sorts the files by name, which started the longest ones
// (postgres-*, online-restore) half-way through. Why a session per file: Linux's autogroup shares
// the CPU between sessions first, and the service's writer thread runs 10 nice levels below its
// process (src/writer/thread.ts) — meant to yield to that process's own recalls. With every file in
// one session, it yielded to the other files' services too: a writer that was runnable got 0.6 % of
// a core, and postgres-deletion's restore of 2,051 rows (a few round trips to PostgreSQL a row)
// took minutes instead of seconds. Each service now competes with its own threads, as on a machine
// or in a cgroup of its own.
//
// The PostgreSQL runs: a private primary and a `pg_basebackup -R` replica (test/support/postgres.ts)
// for the whole run; those files run with TEST_BACKEND=postgres, so startTestService gives each
// service a fresh database there and reads recall from the replica (test/support/test-backend.ts).
//
// Each file's report (TAP) is printed whole when it ends, under a line naming it; the totals of
// each suite and every failing test follow at the end.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresUnavailable, startPrimary, startReplica } from '../dist/test/support/postgres.js';

const TEST_DIR = fileURLToPath(new URL('../dist/test/', import.meta.url));

/** Files at once (docs/testing.md, "CI time": measured on 2 cores). TEST_CONCURRENCY overrides it. */
export const CONCURRENCY = 4;

/**
 * The longest files, longest first (`pg:` = on PostgreSQL): those of 35 s or more in the per-file
 * times a full run prints (2026-11-27 on 0d706c2, 2 cores shared at load 7-28). Every other file
 * follows, SQLite before PostgreSQL, in name order. Only the order depends on this list: a file
 * missing from it still runs (a new long file belongs here, or it may start last and run alone).
 */
const SLOWEST_FIRST = [
  'postgres-two-nodes', 'postgres-failover', 'backfill-under-recall-load', 'postgres-deletion',
  'pg:http-edges', 'postgres-job-locks', 'http-edges', 'early-answer', 'deletion-races',
  'python-client', 'deletion-chunked', 'pg:auth-rate-limit', 'pg:event-time', 'pg:errors',
  'durability', 'postgres-read-your-writes', 'pg:mcp', 'entity-exclusion', 'mcp', 'event-time',
  'entity-forget', 'pg:python-client', 'auth-rate-limit', 'recall-fusion', 'cli-misc',
  'console-browser', 'pg:recall-unique-word', 'open-exposure', 'pg:backfill-under-recall-load',
  'pg:bulk-import', 'recall-unique-word', 'online-restore', 'cli-restore',
  'tenant-lexical-statistics', 'errors', 'cli-export-import', 'pg:concurrency',
  'event-time-export', 'store-contract', 'fuzz', 'use-static-embedder', 'pg:keys-file',
  'pg:endpoints', 'vector-index', 'pg:entity-forget', 'instance-lock', 'client-package',
  'read-port-contract', 'snapshot-writer', 'pg:client', 'endpoints',
];

const SUITES = { sqlite: 'SQLite', postgres: 'HTTP suite on PostgreSQL' };
const BACKENDS = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
const labelOf = (file) => (file.backend === 'postgres' ? `pg:${file.name}` : file.name);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** The totals node's TAP reporter prints at the end of a file (`# pass 12`). */
function totals(tap) {
  const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(tap)?.[1] ?? 0);
  return { tests: count('tests'), pass: count('pass'), fail: count('fail'), cancelled: count('cancelled'), skipped: count('skipped'), todo: count('todo') };
}

/** The failing tests of a file's TAP report, nested names joined by ' > ' (not TODO ones). */
function failures(tap) {
  const path = [];
  const failed = [];
  for (const line of tap.split('\n')) {
    const subtest = /^( *)# Subtest: (.*)$/.exec(line);
    if (subtest) path[subtest[1].length / 4] = subtest[2];
    const result = /^( *)not ok \d+ - (.*)$/.exec(line);
    if (result && !/ # TODO\b/.test(result[2])) {
      const depth = result[1].length / 4;
      failed.push([...path.slice(0, depth), result[2]].join(' > '));
    }
  }
  // A suite fails with its tests: keep only the innermost names.
  return failed.filter((name) => !failed.some((other) => other !== name && other.startsWith(`${name} > `)));
}

/**
 * A file that runs longer than this is stopped (its whole process group) and fails: a hang (a
 * service left keeping the event loop alive) must not hold CI until its own time limit. The
 * slowest file takes ~3 min on a loaded CI box; TEST_FILE_TIMEOUT_S overrides.
 */
const FILE_TIMEOUT_MS = (Number(process.env.TEST_FILE_TIMEOUT_S) || 1200) * 1000;

/** Runs one test file in a session of its own; resolves to its report, exit code and wall time. */
function runFile(file, env, children) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--test-reporter=tap', file.path], {
      detached: true, // setsid(): the session (and process group) of its own
      env: file.backend === 'postgres' ? { ...env, TEST_BACKEND: 'postgres' } : env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let tap = '';
    let errors = '';
    const killGroup = (signal) => {
      try { process.kill(-child.pid, signal); } catch { /* gone */ }
    };
    const timeout = setTimeout(() => {
      errors += `timed out after ${FILE_TIMEOUT_MS / 1000} s (TEST_FILE_TIMEOUT_S): stopped\n`;
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), 10_000).unref();
    }, FILE_TIMEOUT_MS);
    child.stdout.setEncoding('utf8').on('data', (chunk) => (tap += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (errors += chunk));
    child.once('error', (error) => (errors += `${error.stack}\n`));
    child.once('close', (code, signal) => {
      clearTimeout(timeout);
      children.delete(child);
      resolve({ file, tap, errors, code: code ?? 1, signal, ms: Date.now() - started });
    });
  });
}

/**
 * Runs `sqlite` and `postgres` (test file names without `.test.js`) and resolves to the exit code:
 * 0 when every file passed. The PostgreSQL runs are skipped with a message where PostgreSQL cannot
 * start (a failure under POSTGRES_REQUIRED=1: postgresUnavailable throws).
 */
export async function runSuite({ sqlite = [], postgres = [] }) {
  const started = Date.now();
  const concurrency = Number(process.env.TEST_CONCURRENCY) || CONCURRENCY;
  let primary = null;
  let replica = null;
  const stopClusters = async () => {
    await replica?.stop();
    await primary?.stop();
  };
  const children = new Set();
  const queue = [];
  // The files run in sessions of their own, out of reach of a Ctrl-C to this one, and a
  // supervisor's SIGTERM (a CI timeout) reaches only this process: start no further file, pass
  // the signal on to every running file's process group, then stop both clusters whatever happens.
  for (const [signal, exitCode] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    process.once(signal, () => {
      queue.length = 0;
      for (const child of children) {
        try { process.kill(-child.pid, signal); } catch { /* gone */ }
      }
      void stopClusters().then(() => process.exit(exitCode));
    });
  }

  const env = { ...process.env };
  if (postgres.length > 0) {
    const unavailable = postgresUnavailable(); // throws under POSTGRES_REQUIRED=1 (.ci/run)
    if (unavailable) {
      console.log(`# HTTP suite on PostgreSQL skipped: ${unavailable}`);
      postgres = [];
    } else {
      primary = await startPrimary();
      replica = await startReplica(primary);
      env.TEST_POSTGRES_URL = primary.url;
      env.TEST_POSTGRES_READ_URL = replica.url;
      console.log(`# HTTP suite on PostgreSQL: primary :${primary.port}, replica :${replica.port}`);
    }
  }
  const files = [
    ...sqlite.map((name) => ({ name, backend: 'sqlite' })),
    ...postgres.map((name) => ({ name, backend: 'postgres' })),
  ].map((file) => ({ ...file, path: join(TEST_DIR, `${file.name}.test.js`) }));
  const rank = (file) => {
    const at = SLOWEST_FIRST.indexOf(labelOf(file));
    return at === -1 ? SLOWEST_FIRST.length : at;
  };
  const sqliteFirst = (file) => (file.backend === 'sqlite' ? 0 : 1);
  files.sort((a, b) => rank(a) - rank(b) || sqliteFirst(a) - sqliteFirst(b) || a.name.localeCompare(b.name));
  console.log(`# ${files.length} test files (SQLite ${sqlite.length}, PostgreSQL ${postgres.length}), ${concurrency} at a time, slowest first, each in a session of its own`);

  const results = [];
  try {
    queue.push(...files);
    const worker = async () => {
      for (let file = queue.shift(); file; file = queue.shift()) {
        const result = await runFile(file, env, children);
        results.push(result);
        const { tap, errors, code, signal, ms } = result;
        process.stdout.write(`# ${'-'.repeat(20)} ${labelOf(file)}: ${code === 0 ? 'ok' : `FAILED (exit ${signal ?? code})`}, ${seconds(ms)}\n${tap}${tap.endsWith('\n') || tap === '' ? '' : '\n'}`);
        if (errors) process.stdout.write(`${errors.replace(/\n$/, '').replace(/^/gm, '# stderr: ')}\n`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  } finally {
    await stopClusters();
  }

  const failed = [];
  for (const backend of ['sqlite', 'postgres']) {
    const mine = results.filter((r) => r.file.backend === backend);
    if (mine.length === 0) continue;
    const sum = { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
    for (const r of mine) {
      const t = totals(r.tap);
      for (const key of Object.keys(sum)) sum[key] += t[key];
      const names = failures(r.tap);
      const where = `[${BACKENDS[backend]}] ${r.file.name}`;
      for (const name of names) failed.push(`${where}: ${name}`);
      if (r.code !== 0 && names.length === 0) failed.push(`${where}: exited with ${r.signal ?? `code ${r.code}`}`);
    }
    const slowest = [...mine].sort((a, b) => b.ms - a.ms).slice(0, 15).map((r) => `${r.file.name} ${seconds(r.ms)}`).join(', ');
    console.log(`# ${SUITES[backend]}: ${mine.length} files, ${sum.tests} tests, ${sum.pass} pass, ${sum.fail} fail, ${sum.cancelled} cancelled, ${sum.skipped} skipped, ${sum.todo} todo; slowest files: ${slowest}`);
  }
  for (const line of failed) console.log(`# FAILED ${line}`);
  console.log(`# ${failed.length === 0 ? 'passed' : 'FAILED'} in ${seconds(Date.now() - started)}`);
  return failed.length === 0 ? 0 : 1;
}
