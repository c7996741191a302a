#!/usr/bin/env node
// `npm test` after the build: every test file on SQLite and, at the same time, the HTTP suite again
// on PostgreSQL (issue 16; which files: scripts/postgres-http-files.mjs), each slowest first
// (scripts/run-suite.mjs says why). Arguments name files to run instead of all of them (`pg:<name>`:
// that file on PostgreSQL).
import { readdirSync } from 'node:fs';
import { FILES } from './postgres-http-files.mjs';
import { runSuite } from './run-suite.mjs';

const named = process.argv.slice(2);
const all = readdirSync(new URL('../dist/test/', import.meta.url)).filter((f) => f.endsWith('.test.js')).map((f) => f.slice(0, -'.test.js'.length));
process.exit(await runSuite(named.length === 0
  ? { sqlite: all, postgres: FILES }
  : { sqlite: named.filter((n) => !n.startsWith('pg:')), postgres: named.filter((n) => n.startsWith('pg:')).map((n) => n.slice(3)) }));
