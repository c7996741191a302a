#!/usr/bin/env node
// The HTTP suite again, on PostgreSQL (issue 16): starts a private primary (a copy of initdb's output from Debian's
// PostgreSQL 15 binaries on a random loopback port) and a `pg_basebackup -R` streaming replica,
// runs every test file that only speaks the service's HTTP/MCP API with TEST_BACKEND=postgres
// (startTestService then gives each service a fresh database there, recall read from the
// replica: test/support/test-backend.ts), and stops both clusters whatever the outcome.
// `npm test` runs these files in the same pool as the SQLite suite (scripts/test.mjs); this script
// runs them alone. Run after `npm run build` (npm run test:postgres does both). Extra arguments
// replace the file list. Which files, and why the others stay SQLite-only: scripts/postgres-http-files.mjs.
import { FILES } from './postgres-http-files.mjs';
import { runSuite } from './run-suite.mjs';

process.exit(await runSuite({ postgres: process.argv.length > 2 ? process.argv.slice(2) : FILES }));
