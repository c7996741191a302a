// Which test files the HTTP suite runs a second time on PostgreSQL (issue 16), and which stay on
// SQLite with why: read by scripts/test.mjs (npm test) and scripts/test-postgres.mjs.

/** Backend-agnostic: each uses only the HTTP/MCP API, through startTestService. */
export const FILES = [
  'ai-tools', 'auth-rate-limit', 'client', 'concurrency', 'console-assets', 'console-metrics', 'embedding-retry',
  'delete-during-end', 'endpoints', 'entity-forget', 'entity-list', 'episode-list', 'episode-expiry', 'errors', 'event-time', 'bulk-import', 'supersession-value-returns', 'memory-history-budget', 'http-edges', 'lanes', 'mcp', 'memory-position', 'metrics',
  'nginx-proxy', 'openapi', 'python-client', 'query-cache', 'unknown-fields', 'tenant-isolation', 'tenant-isolation-ivf', 'tenant-headers', 'keys-file', 'namespace-listing', 'recall-unique-word', 'backfill-under-recall-load', 'recall-dense-feedback',
];
// Inside those files, tests of deletion and consolidation skip on PostgreSQL until they are wired
// there (test/support/test-backend.ts notYetOnPostgres).

/** Test files that start a service but stay on SQLite only, each with why. */
export const LEFT_OUT = {
  'api-reference': 'the OpenAPI document is the same on either backend',
  'client-package': 'packs and installs the client; the client itself runs on both backends (client, ai-tools)',
  'example-ai-sdk': 'runs the example as a process; its tools run on both backends (ai-tools)',
  'cli-export-import': 'the CLI exports/imports the SQLite file offline',
  'cli-misc': 'the CLI reads and writes the SQLite file offline',
  'cli-restore': 'offline restore into the SQLite file',
  'console-browser': 'drives Chromium against a SQLite service; the console speaks only the API',
  consolidation: 'reads rows from the SQLite file (PostgreSQL: postgres-consolidation, postgres-job-locks)',
  'consolidation-schedule': 'rewrites rows in the SQLite file to age them',
  deletion: 'reads the deletion snapshot files (PostgreSQL: postgres-deletion)',
  'deletion-chunked': 'seeds the SQLite file (PostgreSQL: postgres-deletion deletes 2,051 rows)',
  'deletion-races': 'reads the SQLite file',
  'disk-full': 'the SQLite file on a full disk',
  durability: 'kill -9 against the SQLite file (PostgreSQL: test/postgres-two-nodes.test.ts)',
  'early-answer': 'a service process on its SQLite file (process start-up behaviour)',
  'event-time-export': 'the CLI exports/imports the SQLite file offline (event time on PostgreSQL: event-time)',
  'migration-13': 'a SQLite file written at version 11 (PostgreSQL migration 9 is tested in the same file on a cluster of its own)',
  'entity-exclusion': 'seeds rows straight into the SQLite file',
  extraction: 'reads rows from the SQLite file',
  'extraction-fallback': 'reads rows from the SQLite file',
  fuzz: 'spawns its own service process on a SQLite file',
  'instance-lock': 'the SQLite file\'s instance lock',
  'internal-error-masking': 'breaks the SQLite file to provoke an internal error',
  logging: 'a service process on its SQLite file (log output)',
  'native-uws': 'a service process on its SQLite file (native module check)',
  'online-restore': 'restores from snapshot files and the offline CLI (PostgreSQL: postgres-deletion)',
  'openai-embedder': 'reads stored vectors from the SQLite file',
  'process-failures': 'process failures against the SQLite file',
  'recall-engine': 'builds recall fixtures with better-sqlite3 (PG side: read-port-contract)',
  'recall-explain': 'writes rows into the SQLite file',
  'recall-fusion': 'builds recall fixtures with better-sqlite3 (PG side: read-port-contract)',
  'recall-session-coverage': 'ranks the SQLite file with the engine directly (PG side: read-port-contract; the stage reads only positions)',
  'restore-file-changes': 'restore from snapshot files; seeds the SQLite file',
  'snapshot-writer': 'deletion snapshot files (PostgreSQL keeps snapshots in tables)',
  'sqlite-read-port': 'the SQLite read adapter itself',
  'vector-index': 'the SQLite vector index itself',
};
