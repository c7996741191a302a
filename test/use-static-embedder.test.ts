// The opt-in static embedder (SERVICE_EMBEDDER=use-static): USE-lite's own vocabulary run
// through the real shipped model once, cached, then texts as SIF-weighted sums of token rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cachePaths, distilToFile, ensureTableCached, loadTable, modelDir, UseStaticEmbedder } from '../src/workers/embedding/use-static.js';
import { SentencePieceTokenizer, type Vocabulary } from '../src/workers/embedding/sentencepiece.js';
import { post, startTestService, tempDir } from './support/service.js';
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

test('use-static: its own tokenizer returns the ids of the package\'s, quirks included', async () => {
  const vocabulary = JSON.parse(readFileSync(join(modelDir(), 'vocab.json'), 'utf8')) as Vocabulary;
  const { EmbeddingsModel } = await import('@energetic-ai/embeddings');
  const reference = new EmbeddingsModel({ vocabulary, model: null as never }).tokenizer as { encode(text: string): number[] };
  const tokenizer = new SentencePieceTokenizer(vocabulary);
  const texts = ['', ' ', 'Hello world', 'Caroline: I went to the LGBTQ support group yesterday!', 'a  b   c  ', 'naïve café — 東京 🙂 𝔘nicode',
    'ﬁ ligature ½ ™', '\u0000 tab\there\nnew line', 'x'.repeat(300), 'unbelievably antidisestablishmentarianism', '¿Qué tal? Ça va.'];
  for (const text of texts) assert.deepEqual(tokenizer.encode(text), reference.encode(text), JSON.stringify(text));
  assert.ok(tokenizer.encode('Hello world').length >= 2);
});

/** Runs `code` in a fresh process: is @energetic-ai/core (tfjs) among its main thread's loaded CommonJS modules afterwards? */
// CommonJS -e rather than --input-type=module: worker threads inherit the flags, and that one fails them.
const tfjsLoadedAfter = (code: string) => execFileSync(process.execPath, ['-e', `(async () => {
    ${code}
    const cache = require('node:module')._cache;
    console.log(Object.keys(cache).some((p) => p.includes('@energetic-ai${'/'}core')));
  })().catch((error) => { console.error(error); process.exit(1); });`], { cwd: process.cwd(), encoding: 'utf8' }).trim();
const useStaticModule = new URL('../src/workers/embedding/use-static.js', import.meta.url).href;

test('use-static: loading it does not load tfjs (the tokenizer is its own)', async () => {
  // The table cached first, so the child reads it rather than distilling (whatever ran before).
  await ensureTableCached();
  assert.equal(tfjsLoadedAfter(`const { UseStaticEmbedder } = await import('${useStaticModule}'); await (await UseStaticEmbedder.load()).embed(['hello']);`), 'false');
  // The check itself sees tfjs when the package's tokenizer module is imported.
  assert.equal(tfjsLoadedAfter(`await import('@energetic-ai/embeddings');`), 'true');
});

test('use-static: distilling runs in a thread of its own, leaving tfjs out of the caller\'s thread, and writes the teacher\'s rows', async () => {
  await ensureTableCached();
  const whole = await loadTable((JSON.parse(readFileSync(join(modelDir(), 'vocab.json'), 'utf8')) as Vocabulary).length);
  // A table of the first 406 rows only (6 reserved + one batch): the same rows as the whole one's.
  const count = 406;
  const path = join(tempDir('memrt-use-static-'), 'part.f32');
  assert.equal(tfjsLoadedAfter(`const { distilToFile } = await import('${useStaticModule}'); await distilToFile(${count}, ${JSON.stringify(path)});`), 'false');
  const bytes = readFileSync(path);
  assert.equal(bytes.byteLength, count * 512 * 4);
  const part = new Float32Array(bytes.buffer, bytes.byteOffset, count * 512);
  for (let i = 0; i < part.length; i++) assert.ok(Math.abs(part[i]! - whole[i]!) < 1e-5, `value ${i}: ${part[i]} vs ${whole[i]}`);
  assert.ok(part.some((x) => x !== 0));
  // A place it cannot write: the thread's failure reaches the caller.
  await assert.rejects(distilToFile(7, '/etc/hostname/t.f32'), /could not write/);
});

test('use-static: two starts in one process wait on the same check rather than each distilling', async () => {
  const first = ensureTableCached();
  assert.equal(ensureTableCached(), first);
  assert.equal(await first, 'cached');
  // Settled: a later start checks afresh.
  assert.notEqual(ensureTableCached(), first);
});

test('use-static: the service start finds a whole cached table as the threads read it and distils nothing', async () => {
  await UseStaticEmbedder.load();
  const cached = cachePaths().find((path) => { try { return statSync(path).size > 0; } catch { return false; } })!;
  const dir = tempDir('memrt-use-static-');
  const short = join(dir, 'short.f32');
  writeFileSync(short, Buffer.alloc(1000));
  // 'distilled' would mean it ran the teacher and wrote a table: neither place changes here.
  assert.equal(await ensureTableCached([short, cached]), 'cached');
  assert.equal(await ensureTableCached([join(dir, 'absent.f32'), cached]), 'cached');
  assert.equal(statSync(short).size, 1000);
});

test('use-static: a service started with it embeds in its pool threads and recalls by meaning', async () => {
  const t = await startTestService({ SERVICE_EMBEDDER: 'use-static' });
  try {
    await post(t.base, '/v1/remember', { entity: 'sam', fact: 'Sam adopted a puppy from the animal rescue' });
    await post(t.base, '/v1/remember', { entity: 'sam', fact: 'Sam repaired the kitchen sink on Sunday' });
    await t.service.backfill.idle();
    // "Sam" matches both equally: the vectors put the puppy first, nearer by a clear margin (the
    // hashing embedder, which has no meaning, gives both the same cosine within 0.001).
    const { body } = await post(t.base, '/v1/recall', { query: 'Sam dog shelter', limit: 2, explain: true });
    assert.equal(body.memories[0].content, 'Sam adopted a puppy from the animal rescue');
    const [puppy, sink] = body.memories.map((m: { explanation: { signals: { signal: string; raw: number | null }[] } }) =>
      m.explanation.signals.find((s) => s.signal === 'vector')!.raw);
    assert.ok(puppy !== null && sink !== null && puppy - sink > 0.02, `${puppy} vs ${sink}`);
  } finally {
    await t.close();
  }
});
