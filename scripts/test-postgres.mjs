#!/usr/bin/env node
// The HTTP suite again, on PostgreSQL (issue 16): starts a private primary (initdb from Debian's
// PostgreSQL 15 binaries on a random loopback port) and a `pg_basebackup -R` streaming replica,
// runs every test file that only speaks the service's HTTP/MCP API with TEST_BACKEND=postgres
// (startTestService then gives each service a fresh database there, recall read from the
// replica: test/support/test-backend.ts), and stops both clusters whatever the outcome.
// Run after `npm run build` (npm test does both). Extra arguments replace the file list.
import { spawn } from 'node:child_process';
import { postgresUnavailable, startPrimary, startReplica } from '../dist/test/support/postgres.js';

/** Backend-agnostic: each uses only the HTTP/MCP API, through startTestService. */
const FILES = [
  'auth-rate-limit', 'client', 'concurrency', 'console-assets', 'console-metrics', 'embedding-retry',
  'endpoints', 'entity-list', 'episode-expiry', 'errors', 'http-edges', 'lanes', 'mcp', 'metrics',
  'nginx-proxy', 'openapi', 'query-cache',
];
// Inside those files, tests of deletion and consolidation skip on PostgreSQL until they are wired
// there (test/support/test-backend.ts notYetOnPostgres).

/** Test files that start a service but stay on SQLite only, each with why. */
const LEFT_OUT = {
  'cli-export-import': 'the CLI exports/imports the SQLite file offline',
  'cli-misc': 'the CLI reads and writes the SQLite file offline',
  'cli-restore': 'offline restore into the SQLite file',
  'console-browser': 'reads deletion snapshot files from the service folder; deletion on PG is helper pgdel\'s',
  consolidation: 'consolidation on PG is helper pgjobs\'s; reads rows from the SQLite file',
  'consolidation-schedule': 'consolidation on PG is helper pgjobs\'s; reads rows from the SQLite file',
  'delete-during-end': 'deletion on PG is helper pgdel\'s',
  deletion: 'deletion on PG is helper pgdel\'s',
  'deletion-chunked': 'deletion on PG is helper pgdel\'s; seeds the SQLite file',
  'deletion-races': 'deletion on PG is helper pgdel\'s; reads the SQLite file',
  'disk-full': 'the SQLite file on a full disk',
  durability: 'kill -9 against the SQLite file (PostgreSQL: test/postgres-two-nodes.test.ts)',
  'early-answer': 'a service process on its SQLite file (process start-up behaviour)',
  'entity-exclusion': 'seeds rows straight into the SQLite file',
  extraction: 'reads rows from the SQLite file',
  'extraction-fallback': 'reads rows from the SQLite file',
  fuzz: 'fuzzes DELETE, restore and consolidate, which are not wired on PG yet (pgdel, pgjobs)',
  'instance-lock': 'the SQLite file\'s instance lock',
  'internal-error-masking': 'breaks the SQLite file to provoke an internal error',
  logging: 'a service process on its SQLite file (log output)',
  'native-uws': 'a service process on its SQLite file (native module check)',
  'online-restore': 'restore on PG is helper pgdel\'s',
  'openai-embedder': 'reads stored vectors from the SQLite file',
  'process-failures': 'process failures against the SQLite file',
  'recall-engine': 'builds recall fixtures with better-sqlite3 (PG side: read-port-contract)',
  'recall-explain': 'writes rows into the SQLite file',
  'recall-fusion': 'builds recall fixtures with better-sqlite3 (PG side: read-port-contract)',
  'restore-file-changes': 'restore from snapshot files; seeds the SQLite file',
  'snapshot-writer': 'deletion snapshot files (PG keeps snapshots in tables: pgdel)',
  'sqlite-read-port': 'the SQLite read adapter itself',
  'vector-index': 'the SQLite vector index itself',
};

const unavailable = postgresUnavailable();
if (unavailable) {
  console.log(`# HTTP suite on PostgreSQL skipped: ${unavailable}`);
  process.exit(0);
}

const files = (process.argv.length > 2 ? process.argv.slice(2) : FILES).map((name) => `dist/test/${name}.test.js`);
const started = Date.now();
const primary = await startPrimary();
let replica = null;
let code = 1;
const stop = async () => {
  await replica?.stop();
  await primary.stop();
};
// A Ctrl-C or a CI timeout still stops both clusters (the test runner child gets the signal too).
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void stop().then(() => process.exit(130)));
try {
  replica = await startReplica(primary);
  console.log(`# HTTP suite on PostgreSQL: primary :${primary.port}, replica :${replica.port}, ${files.length} files (${Object.keys(LEFT_OUT).length} stay SQLite-only, reasons in scripts/test-postgres.mjs)`);
  code = await new Promise((resolve) => {
    const child = spawn(process.execPath, ['--test', '--test-concurrency=2', ...files], {
      stdio: 'inherit',
      env: { ...process.env, TEST_BACKEND: 'postgres', TEST_POSTGRES_URL: primary.url, TEST_POSTGRES_READ_URL: replica.url },
    });
    child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
} finally {
  await stop();
}
console.log(`# HTTP suite on PostgreSQL: ${code === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(code);
