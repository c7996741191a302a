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
  // The same engine ranks over SQLite and PostgreSQL (src/workers/port/read-port.ts); storage code
  // reached from it would tie ranking to one backend.
  const loaded = [...reachable('workers/recall/engine.js')];
  const packages = loaded.flatMap(packagesOf);
  assert.deepEqual(packages.filter((p) => ['better-sqlite3', 'sqlite-vec', 'postgres'].includes(p)), []);
  assert.deepEqual(loaded.map((f) => relative(src, f)).filter((f) => /(^|\/)db\.js$|\/sqlite\/|\/postgres\//.test(f)), []);
});

test('the use cases know no transport: core/operations loads no http code, neither uWS nor the MCP SDK', () => {
  // REST and MCP both serve the same answers (core/operations/contract.ts), each in its own way;
  // a use case that reached for a transport would answer one of them differently.
  const loaded = [...reachable('core/operations/memory-operations.js')];
  assert.deepEqual(loaded.filter((f) => folderOf(f) === 'http').map((f) => relative(src, f)), []);
  const packages = loaded.flatMap(packagesOf);
  assert.deepEqual(packages.filter((p) => p === 'uWebSockets.js' || p.startsWith('@modelcontextprotocol/')), []);
});

/** Packages a compiled module imports (bare specifiers). */
function packagesOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^.'"][^'"]*)['"]/g)].map((m) => m[1]);
}

/** The folder a module sits in, under src (e.g. 'writer/sqlite'); modules at a thread folder's root count as that folder. */
const subfolderOf = (file: string) => dirname(relative(src, file));

test('no folder of src imports a folder that imports it back (type-only imports count)', () => {
  // Folder-level arrows, e.g. writer -> writer/sqlite -> writer/commands: a cycle between folders
  // means neither can be read, moved or tested without the other. A thread folder's own modules
  // (workers/worker.ts, cli/index.ts) count as the folder itself, so what its subfolders share
  // lives in a subfolder below them (workers/port, cli/terminal), never beside the entry point.
  const edges = folderEdges();
  const cycles: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (folder: string) => {
    state.set(folder, 'visiting');
    path.push(folder);
    for (const next of edges.get(folder) ?? []) {
      if (state.get(next) === 'visiting') cycles.push([...path.slice(path.indexOf(next)), next].join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(folder, 'done');
  };
  for (const folder of edges.keys()) if (!state.has(folder)) visit(folder);
  assert.deepEqual(cycles, []);
  // The check sees the folders the layout names (a broken graph would find no cycle vacuously).
  for (const [from, to] of [['workers', 'workers/recall'], ['workers/recall', 'workers/port'], ['workers/sqlite', 'workers/port'], ['cli', 'cli/commands'], ['core/jobs', 'core']]) {
    assert.ok(edges.get(from)?.has(to), `${from} -> ${to}`);
  }
});

/** Folder-level import arrows (type-only imports count): each folder to the folders its modules import. */
function folderEdges(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const file of modulesUnder(sources)) {
    const from = subfolderOf(file);
    for (const target of importsOf(file, { runtimeOnly: false })) {
      if (!target.startsWith(src)) continue;
      const to = subfolderOf(target);
      if (to !== from) (edges.get(from) ?? edges.set(from, new Set()).get(from)!).add(to);
    }
  }
  return edges;
}

/** Which subfolders each pool folder may import (type-only imports count), besides shared/ and itself. */
const POOL_MAY_IMPORT: Record<string, readonly string[]> = {
  // The read port: the interface both adapters implement and the rows and rules it speaks in.
  'workers/port': [],
  // Ranking over the port, whichever backend answers.
  'workers/recall': ['workers/port'],
  // The adapters: each reads its own storage for the port; neither knows the other, nor ranking.
  'workers/sqlite': ['workers/port', 'workers/ivf'],
  'workers/postgres': ['workers/port', 'workers/ivf'],
};

test('the pool\'s folders point one way: recall and the adapters meet only at workers/port', () => {
  const wrong: string[] = [];
  for (const [folder, allowed] of Object.entries(POOL_MAY_IMPORT)) {
    const files = modulesUnder(join(sources, folder));
    assert.ok(files.length > 0, folder);
    for (const file of files) {
      for (const target of importsOf(file, { runtimeOnly: false })) {
        const to = subfolderOf(target);
        if (target.startsWith(src) && to !== folder && folderOf(target) !== 'shared' && !allowed.includes(to)) {
          wrong.push(`${relative(src, file)} -> ${relative(src, target)}`);
        }
      }
    }
  }
  assert.deepEqual(wrong, []);
});

/** Where a module's imports reach a backend: its packages, its connection module, or its adapter folders. */
function backendsReached(file: string): { sqlite: string[]; postgres: string[] } {
  const targets = [
    ...[...readSource(file).matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^.'"][^'"]*)['"]/g)].map((m) => m[1]),
    ...importsOf(file, { runtimeOnly: false }).filter((t) => t.startsWith(src)).map((t) => relative(src, t)),
  ];
  return {
    sqlite: [...new Set(targets.filter((t) => ['better-sqlite3', 'sqlite-vec', 'shared/db.js'].includes(t) || /(^|\/)sqlite\//.test(t)))],
    postgres: [...new Set(targets.filter((t) => t === 'postgres' || /(^|\/)postgres\//.test(t)))],
  };
}

/**
 * Modules outside the sqlite/ and postgres/ folders that may still reach a backend, each with why. The
 * thread entry points choose the backend; the offline CLI is its own process and opens storage
 * itself (the SQLite file, or PostgreSQL for migrate and snapshots).
 */
const BACKEND_COMPOSITION = ['writer/thread.js', 'workers/open-read-port.js'];
const SQLITE_ELSEWHERE: Record<string, string> = {
  'shared/db.js': 'opens the SQLite file (better-sqlite3 with sqlite-vec) for the writer, the pool and the CLI',
  'shared/instance-lock.js': 'the one-writer lock is an exclusive tiny SQLite file, whatever the backend',
  'shared/meta.js': 'reads the SQLite meta table beside the vector byte helpers both backends use',
  'shared/literal-statements.js': "statements with row counts spelled in (SQLite re-prepares on a bound LIMIT), for both SQLite adapters",
  'shared/connection-statements.js': 'statements prepared once per SQLite connection and shared by every namespace, for both SQLite adapters',
};
const POSTGRES_ELSEWHERE: Record<string, string> = {
  'shared/replaceable-sql.js': 'the guard that replaces a postgres client spoilt by a failover (both threads and main)',
  'core/cluster-turns.js': "the main thread's cross-node turns (advisory locks), no rows",
  'core/postgres-reachable.js': "the main thread's reachability probe, no rows",
  'core/jobs/postgres-job-locks.js': "the main thread's background-job locks across nodes, no rows",
};

test('backends are siblings: SQLite only under */sqlite/, the postgres client only under */postgres/, but for the named modules', () => {
  const offlineCli = (f: string) => f.startsWith('cli/');
  const stray: string[] = [];
  for (const file of modulesUnder(sources)) {
    const name = relative(src, file);
    const folder = subfolderOf(file);
    if (BACKEND_COMPOSITION.includes(name) || offlineCli(name)) continue;
    const { sqlite, postgres } = backendsReached(file);
    if (!/(^|\/)sqlite$/.test(folder) && !(name in SQLITE_ELSEWHERE)) stray.push(...sqlite.map((t) => `${name} -> ${t}`));
    if (!/(^|\/)postgres$/.test(folder) && !(name in POSTGRES_ELSEWHERE)) stray.push(...postgres.map((t) => `${name} -> ${t}`));
  }
  assert.deepEqual(stray, []);
  // Each named exception still reaches its backend (a stale name would excuse nothing, silently).
  for (const name of Object.keys(SQLITE_ELSEWHERE)) assert.ok(backendsReached(resolve(src, name)).sqlite.length > 0, name);
  for (const name of Object.keys(POSTGRES_ELSEWHERE)) assert.ok(backendsReached(resolve(src, name)).postgres.length > 0, name);
  for (const name of BACKEND_COMPOSITION) {
    const { sqlite, postgres } = backendsReached(resolve(src, name));
    assert.ok(sqlite.length > 0 && postgres.length > 0, name);
  }
  // The adapters themselves are where the backends are reached.
  for (const adapter of ['writer/sqlite', 'workers/sqlite']) assert.ok(modulesUnder(join(sources, adapter)).every((f) => subfolderOf(f) === adapter));
  assert.ok(modulesUnder(join(sources, 'workers/sqlite')).some((f) => backendsReached(f).sqlite.includes('shared/db.js')));
  assert.ok(modulesUnder(join(sources, 'workers/postgres')).some((f) => backendsReached(f).postgres.includes('postgres')));
});

test('each write rule is written once, against the row port: writer/commands loads no backend', () => {
  // writer/commands holds every writer command's rule and the ports they are written against;
  // writer/sqlite (better-sqlite3, synchronous) and writer/postgres (the postgres client) are
  // sibling adapters that run the same rules. Neither adapter reaches into the other.
  const rules = modulesUnder(join(sources, 'writer/commands'));
  assert.ok(rules.some((f) => f.endsWith('writer/commands/remember.js')));
  for (const file of rules) {
    assert.deepEqual(packagesOf(file).filter((p) => ['better-sqlite3', 'sqlite-vec', 'postgres'].includes(p)), [], relative(src, file));
    const wrong = importsOf(file, { runtimeOnly: false }).filter((t) => t.startsWith(src) && folderOf(t) === 'writer' && subfolderOf(t) !== 'writer/commands');
    assert.deepEqual(wrong.map((t) => relative(src, t)), [], relative(src, file));
  }
  for (const [adapter, other] of [['writer/sqlite', 'writer/postgres'], ['writer/postgres', 'writer/sqlite']] as const) {
    for (const file of modulesUnder(join(sources, adapter))) {
      const wrong = importsOf(file, { runtimeOnly: false }).filter((t) => subfolderOf(t) === other);
      assert.deepEqual(wrong.map((t) => relative(src, t)), [], relative(src, file));
    }
  }
  // The PostgreSQL client is loaded by writer code only under writer/postgres.
  const writerFiles = modulesUnder(join(sources, 'writer'));
  assert.deepEqual(writerFiles.filter((f) => packagesOf(f).includes('postgres') && subfolderOf(f) !== 'writer/postgres').map((f) => relative(src, f)), []);
  // Every writer command has its rule file's export in the rule set (a missing one fails to compile: commands/index.ts).
  assert.ok(readSource(resolve(src, 'writer/commands/index.js')).includes('export const RULES'));
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
  // node: built-ins load lazily (import()) for the one request fetch cannot send.
  assert.deepEqual([...reachable('client/index.js')].flatMap(packagesOf), []);
  assert.deepEqual([...reachable('../clients/typescript/src/ai.js')].flatMap(packagesOf), ['ai']);
});
