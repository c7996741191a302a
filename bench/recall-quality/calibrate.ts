// An embedder's similarity floor (shared/embedder-identity.ts minSimilarity): the cosine from
// which a vector match counts on its own. Taken, as for the others, at the 90th percentile of
// question / non-evidence-turn similarities on the LoCoMo dev conversations (a question against
// every turn of its conversation that is not its evidence): 9 in 10 unrelated turns fall below it.
//   node dist/bench/recall-quality/calibrate.js use|use-static|glove
import { loadLocomo } from './locomo-data.js';
import { createEmbedder } from '../../src/workers/embedding/index.js';
import { loadConfig } from '../../src/shared/config.js';

const kind = process.argv[2] ?? 'use';
const embedder = await createEmbedder(loadConfig({ SERVICE_EMBEDDER: kind, SERVICE_PATH: ':memory:' }));
const conversations = loadLocomo();
if (!conversations) throw new Error('LoCoMo dev data not found (BENCH_LOCOMO_DIR)');
const dot = (a: Float32Array, b: Float32Array) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!; return s; };
const unrelated: number[] = [];
for (const c of conversations) {
  const turns = c.sessions.flat();
  const vectors: Float32Array[] = [];
  for (let i = 0; i < turns.length; i += 64) vectors.push(...(await embedder.embed(turns.slice(i, i + 64).map((t) => `${t.speaker}: ${t.text}`))));
  for (const q of c.questions) {
    const [qv] = await embedder.embed([q.text]);
    const evidence = new Set(q.evidence);
    turns.forEach((t, i) => { if (!evidence.has(t.diaId)) unrelated.push(dot(qv!, vectors[i]!)); });
  }
}
unrelated.sort((a, b) => a - b);
const at = (p: number) => unrelated[Math.floor(p * (unrelated.length - 1))]!.toFixed(3);
console.log(`${embedder.id}: ${unrelated.length} question/other-turn pairs; similarity p50 ${at(0.5)} p90 ${at(0.9)} p99 ${at(0.99)}`);
