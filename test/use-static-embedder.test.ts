// The opt-in static embedder (SERVICE_EMBEDDER=use-static): USE-lite's own vocabulary run
// through the real shipped model once, cached, then texts as SIF-weighted sums of token rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cachePaths, loadTable, UseStaticEmbedder } from '../src/workers/embedding/use-static.js';
import { tempDir } from './support/service.js';
import { createEmbedder } from '../src/workers/embedding/index.js';
import { embedderIdentity } from '../src/shared/embedder-identity.js';
import { ConfigError, loadConfig } from '../src/shared/config.js';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

test('use-static: configured by name, and its identity is what the embedder reports', async () => {
  const config = loadConfig({ SERVICE_EMBEDDER: 'use-static', SERVICE_PATH: ':memory:' });
  const embedder = await createEmbedder(config);
  assert.ok(embedder instanceof UseStaticEmbedder);
  const identity = embedderIdentity(config);
  assert.equal(identity.id, embedder.id);
  assert.equal(identity.dimensions, embedder.dimensions);
  assert.throws(() => loadConfig({ SERVICE_EMBEDDER: 'use-statik', SERVICE_PATH: ':memory:' }), (e: unknown) => e instanceof ConfigError && /use-static/.test(e.message));
});

test('use-static: unit vectors, the same text the same vector, related texts nearer than unrelated ones', async () => {
  const embedder = await UseStaticEmbedder.load();
  const [dog, puppy, market, dogAgain, blank] = await embedder.embed([
    'I adopted a dog from the shelter', 'we took home a puppy from the animal rescue', 'the stock market fell sharply on Monday',
    'I adopted a dog from the shelter', '   ',
  ]);
  assert.equal(dog!.length, 512);
  assert.ok(Math.abs(cosine(dog!, dog!) - 1) < 1e-4);
  assert.deepEqual([...dogAgain!], [...dog!]);
  assert.ok(cosine(dog!, puppy!) > cosine(dog!, market!), `${cosine(dog!, puppy!)} vs ${cosine(dog!, market!)}`);
  assert.ok(blank!.every((x) => x === 0), 'a blank text is the zero vector, as with the other embedders');
});

test('use-static: the table is cached whole, and a short cache file is replaced rather than trusted', async () => {
  await UseStaticEmbedder.load();
  const cached = cachePaths().find((path) => { try { return statSync(path).size > 0; } catch { return false; } });
  assert.ok(cached, 'a cache place holds the table');
  const whole = statSync(cached!).size;
  assert.equal(whole % (512 * 4), 0);
  const rows = whole / (512 * 4);
  // A damaged copy in the first place, the whole one in the second: the whole one is read.
  const dir = tempDir('memrt-use-static-');
  const short = join(dir, 'short.f32');
  writeFileSync(short, Buffer.alloc(1000));
  const table = await loadTable(rows, [short, cached!]);
  assert.equal(table.length, rows * 512);
  assert.ok(table.some((x) => x !== 0));
});
