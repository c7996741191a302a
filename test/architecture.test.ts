// Recall stays in the pool: neither the main thread's modules nor the writer thread's can
// reach the recall engine or the embedders through their imports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** Every project module statically imported from `entry` (type-only imports vanish in JS). */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(file, 'utf8');
    for (const match of code.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"](\.[^'"]+)['"]/g)) {
      visit(resolve(dirname(file), match[1]));
    }
  };
  visit(resolve(src, entry));
  return seen;
}

const POOL_ONLY = /workers\/(recall|embedding|extraction|consolidation)\/|workers\/worker\.js$|workers\/read-store\.js$/;

test('the main thread does not load recall, embedding or extraction code', () => {
  // The query embedding cache keys by the embedder's id, which loads no model.
  const loaded = [...reachable('main.js')].filter((f) => POOL_ONLY.test(f) && !f.endsWith('embedding/identity.js'));
  assert.deepEqual(loaded, []);
});

test('the writer thread does not load recall or embedder code', () => {
  // The writer only needs the embedder's identity (id and dimension), which loads no model.
  const loaded = [...reachable('writer/thread.js')].filter((f) => POOL_ONLY.test(f) && !f.endsWith('embedding/identity.js'));
  assert.deepEqual(loaded, []);
});

test('the pool worker is where recall lives', () => {
  const loaded = [...reachable('workers/worker.js')];
  assert.ok(loaded.some((f) => f.endsWith('recall/engine.js')));
});
