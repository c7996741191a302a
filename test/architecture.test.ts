// The folders are the threads (README, "Where the code lives"): src/http and src/core run on the
// main thread, src/writer on the one writer thread, src/workers on the pool's threads, src/shared
// is a leaf every thread may load. These tests keep the arrows pointing one way, and keep each
// thread from loading code that belongs to another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
/** The TypeScript sources: the layering rules read them (type-only imports count there). */
const sources = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** Every TypeScript module, named by the path its compiled JS has under dist/src. */
function modulesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return modulesUnder(path);
    return name.endsWith('.ts') ? [resolve(src, relative(sources, path)).replace(/\.ts$/, '.js')] : [];
  });
}

/** Project modules a compiled module names: static imports, re-exports and import() types. */
function importsOf(file: string, { runtimeOnly }: { runtimeOnly: boolean }): string[] {
  // Compiled JS: type-only imports are gone, so what is left is what the thread loads. The
  // TypeScript source keeps the type-only arrows, which count for layering.
  const code = runtimeOnly ? readFileSync(file, 'utf8') : readSource(file);
  const specifiers = [
    ...code.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"](\.[^'"]+)['"]/g),
    ...(runtimeOnly ? [] : code.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g)),
  ].map((match) => match[1]);
  return specifiers.map((specifier) => resolve(dirname(file), specifier));
}

function readSource(file: string): string {
  return readFileSync(resolve(sources, relative(src, file)).replace(/\.js$/, '.ts'), 'utf8');
}

function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const next of importsOf(file, { runtimeOnly: true })) visit(next);
  };
  visit(resolve(src, entry));
  return seen;
}

const folderOf = (file: string) => relative(src, file).split('/')[0];

/** Which folders each folder may import from (type-only imports included). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  shared: ['shared'],
  writer: ['writer', 'shared'],
  workers: ['workers', 'shared'],
  core: ['core', 'shared'],
  http: ['http', 'core', 'shared'],
  client: ['client', 'shared'],
  // Generators of files from the declarations (the standalone client, the API reference).
  codegen: ['codegen', 'http', 'core', 'shared'],
  // The offline CLI is its own process: it opens the database as the writer would, and embeds as
  // the pool would, and talks to a running service through the client library (restore while it runs).
  cli: ['cli', 'writer', 'workers', 'shared', 'client'],
};

test('every folder imports only from the folders below it', () => {
  const wrong: string[] = [];
  for (const file of modulesUnder(sources)) {
    const folder = folderOf(file);
    const allowed = MAY_IMPORT[folder];
    if (!allowed) continue; // main.js and service.js: the entry point and the composition root
    for (const target of importsOf(file, { runtimeOnly: false })) {
      const targetFolder = folderOf(target);
      if (!target.startsWith(src)) continue;
      // `serve` starts the service the way `npm start` does: through the process entry point.
      if (!allowed.includes(targetFolder) && target !== resolve(src, 'main.js')) {
        wrong.push(`${relative(src, file)} -> ${relative(src, target)}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

test('no module imports itself through others (type-only imports count)', () => {
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'visiting');
    path.push(file);
    for (const next of importsOf(file, { runtimeOnly: false })) {
      if (!next.startsWith(src)) continue;
      if (state.get(next) === 'visiting') cycles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(src, f)).join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of modulesUnder(sources)) if (!state.has(file)) visit(file);
  assert.deepEqual(cycles, []);
});

test('the main thread loads no pool or writer code', () => {
  const loaded = [...reachable('main.js')].filter((f) => ['workers', 'writer'].includes(folderOf(f)));
  assert.deepEqual(loaded.map((f) => relative(src, f)), []);
});

test('the writer thread loads only writer and shared code', () => {
  const loaded = [...reachable('writer/thread.js')].filter((f) => !['writer', 'shared'].includes(folderOf(f)));
  assert.deepEqual(loaded.map((f) => relative(src, f)), []);
});

test('a pool thread loads only pool and shared code, and recall lives there', () => {
  const loaded = [...reachable('workers/worker.js')];
  assert.deepEqual(loaded.filter((f) => !['workers', 'shared'].includes(folderOf(f))).map((f) => relative(src, f)), []);
  assert.ok(loaded.some((f) => f.endsWith('workers/recall/engine.js')));
});

test('recall ranks over the read port alone: the engine loads no database client and no adapter', () => {
  // The same engine ranks over SQLite and PostgreSQL (src/workers/read-port.ts); storage code
  // reached from it would tie ranking to one backend.
  const loaded = [...reachable('workers/recall/engine.js')];
  const packages = loaded.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^.'"][^'"]*)['"]/g)].map((m) => m[1]));
  assert.deepEqual(packages.filter((p) => ['better-sqlite3', 'sqlite-vec', 'postgres'].includes(p)), []);
  assert.deepEqual(loaded.map((f) => relative(src, f)).filter((f) => /(^|\/)(sqlite-read-port|read-store|db)\.js$|\/postgres\//.test(f)), []);
});

// The client is its own package (clients/typescript), compiled here beside the server: what it
// loads must all be inside it, or it would not install alone.
const clientPackage = resolve(src, '../clients/typescript/src');

test('the client library loads nothing outside its own package (it installs alone)', () => {
  const loaded = [...reachable('client/index.js'), ...reachable('../clients/typescript/src/ai.js')]
    .filter((f) => f !== resolve(src, 'client/index.js') && !f.startsWith(`${clientPackage}/`));
  assert.deepEqual(loaded.map((f) => relative(src, f)), []);
});

test('the client library loads no package but the AI SDK, and that only from its /ai entry', () => {
  const packagesOf = (files: Iterable<string>) => [...files].flatMap((f) =>
    [...readFileSync(f, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^.'"][^'"]*)['"]/g)].map((m) => m[1]));
  // node: built-ins load lazily (import()) for the one request fetch cannot send.
  assert.deepEqual(packagesOf(reachable('client/index.js')), []);
  assert.deepEqual(packagesOf(reachable('../clients/typescript/src/ai.js')), ['ai']);
});
