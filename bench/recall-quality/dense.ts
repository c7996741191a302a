// Dense signals compared on their own: each embedder ranks every turn by cosine to the question
// (no lexical signal, no engine), on the LoCoMo dev conversations (evidence turns, one
// conversation at a time) and on the synthetic corpus (the answering turn, over all sessions).
// Next to the quality: what the signal costs — load time, resident memory it added, embedding
// time per stored text (batches of 64) and per query (one at a time, as recall embeds it).
//
//   npm run bench:quality -- dense
//
// Variants: USE-lite (the default), GloVe SIF averages (smoothing a, with and without the common
// component removed), and the hashing embedder as the no-semantics floor.
import { buildCorpus } from './corpus.js';
import { loadLocomo } from './locomo-data.js';
import { scoreHeader, scoreLine, scoreRankings, type Scores } from './scoring.js';
import type { Embedder } from '../../src/workers/embedding/embedder.js';
import { GloveEmbedder } from '../../src/workers/embedding/glove.js';
import { HashingEmbedder } from '../../src/workers/embedding/hashing.js';
import { GLOVE_DEFAULTS } from '../../src/shared/embedder-identity.js';
import { UseLiteEmbedder } from '../../src/workers/embedding/use-lite.js';
import { UseStaticEmbedder } from '../../src/workers/embedding/use-static.js';

const BATCH = 64;
const TOP = 10;

/** A retrieval task: texts to rank, queries, and for each query the indexes of its evidence. */
interface Task {
  name: string;
  texts: string[];
  queries: { text: string; evidence: Set<string> }[];
  /** Queries only rank texts of their own group (one LoCoMo conversation); null = all texts. */
  group: ((query: number) => [number, number]) | null;
}

interface Cost {
  loadMs: number;
  rssMb: number;
  msPerText: number;
  msPerQuery: number;
}

const dot = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

async function embedAll(embedder: Embedder, texts: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += BATCH) out.push(...(await embedder.embed(texts.slice(i, i + BATCH))));
  return out;
}

const teacherTexts = new Map<Embedder, Map<string, Float32Array[]>>();

/** `queryEmbedder`: queries through another embedder than the texts (asymmetric; one space). */
async function evaluate(embedder: Embedder, task: Task, cost: { textMs: number; texts: number; queryMs: number; queries: number }, queryEmbedder = embedder): Promise<Scores> {
  let started = performance.now();
  // The asymmetric variants share the teacher's text vectors: embedded once per task.
  const memo = queryEmbedder === embedder ? null : (teacherTexts.get(embedder) ?? teacherTexts.set(embedder, new Map()).get(embedder)!);
  const textVectors = memo?.get(task.name) ?? await embedAll(embedder, task.texts);
  memo?.set(task.name, textVectors);
  cost.textMs += performance.now() - started;
  cost.texts += task.texts.length;
  const ranked = new Map<string, string[]>();
  const evidence = new Map<string, Set<string>>();
  for (const [q, query] of task.queries.entries()) {
    started = performance.now();
    const [vector] = await queryEmbedder.embed([query.text]);
    cost.queryMs += performance.now() - started;
    cost.queries++;
    const [from, to] = task.group ? task.group(q) : [0, task.texts.length];
    const scored: [number, number][] = [];
    for (let t = from; t < to; t++) scored.push([t, dot(vector, textVectors[t])]);
    scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    ranked.set(String(q), scored.slice(0, TOP).map(([t]) => String(t)));
    evidence.set(String(q), query.evidence);
  }
  return scoreRankings(ranked, evidence);
}

function locomoTask(): Task | null {
  const conversations = loadLocomo();
  if (!conversations) return null;
  const texts: string[] = [];
  const queries: Task['queries'] = [];
  const ranges: [number, number][] = [];
  for (const c of conversations) {
    const from = texts.length;
    const indexOf = new Map<string, number>();
    for (const turn of c.sessions.flat()) {
      indexOf.set(turn.diaId, texts.length);
      texts.push(`${turn.speaker}: ${turn.text}`);
    }
    for (const q of c.questions) {
      queries.push({ text: q.text, evidence: new Set(q.evidence.map((id) => String(indexOf.get(id)))) });
      ranges.push([from, texts.length]);
    }
  }
  return { name: `LoCoMo dev (${queries.length} questions, ${texts.length} turns)`, texts, queries, group: (q) => ranges[q] };
}

function syntheticTask(): Task {
  const corpus = buildCorpus({ people: 24, sessionsPerPerson: 3, factsPerPerson: 6, seed: 42 });
  const texts: string[] = [];
  const answerOf = new Map<string, number>();
  for (const session of corpus.sessions) {
    for (const turn of session.turns) {
      for (const q of turn.answers ?? []) answerOf.set(q, texts.length);
      texts.push(turn.content);
    }
  }
  const queries = corpus.questions.map((q) => ({ text: q.text, evidence: new Set([String(answerOf.get(q.id))]) }));
  return { name: `synthetic seed 42 (${queries.length} questions, ${texts.length} turns)`, texts, queries, group: null };
}

type Variant = [string, () => Promise<Embedder>, asymmetric?: boolean];

/** USE-lite distilled to a static token table (use-static.ts); `asymmetric`: texts keep the teacher. */
const STATIC_VARIANTS: Variant[] = [1e-4, 1e-3].flatMap((a) => [false, true].flatMap((removeCommon): Variant[] => [
  [`USE-static a=${a}${removeCommon ? ' -common' : ''}`, () => UseStaticEmbedder.load({ a, removeCommon })],
  [`USE-lite texts, USE-static a=${a}${removeCommon ? ' -common' : ''} queries`, () => UseStaticEmbedder.load({ a, removeCommon }), true],
]));

// `-- dense --static`: only the floor, the teacher and its distilled tables (issue 27).
const VARIANTS: Variant[] = [
  ['hash-256 (no semantics)', async () => new HashingEmbedder(256)],
  ...(process.argv.includes('--static') ? [] : [1e-4, 1e-3, 1e-2].flatMap((a) => [false, true].map((removeCommon): Variant =>
    [`GloVe SIF a=${a}${removeCommon ? ' -common' : ''}`, () => GloveEmbedder.load({ ...GLOVE_DEFAULTS, a, removeCommon })]))),
  ...STATIC_VARIANTS,
  ['USE-lite (default)', () => UseLiteEmbedder.load()],
];

export async function runDense(): Promise<void> {
  const tasks = [locomoTask(), syntheticTask()].filter((t): t is Task => t !== null);
  const results: { name: string; id: string; scores: Scores[]; cost: Cost }[] = [];
  let teacher: UseLiteEmbedder | null = null;
  for (const [name, load, asymmetric] of VARIANTS) {
    process.stderr.write(`[bench] dense: ${name}\n`);
    if (asymmetric) teacher ??= await UseLiteEmbedder.load();
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const embedder = await load();
    const loadMs = performance.now() - started;
    const rssMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    const cost = { textMs: 0, texts: 0, queryMs: 0, queries: 0 };
    const scores: Scores[] = [];
    for (const task of tasks) scores.push(asymmetric ? await evaluate(teacher!, task, cost, embedder) : await evaluate(embedder, task, cost));
    results.push({ name, id: embedder.id, scores, cost: { loadMs, rssMb, msPerText: cost.textMs / cost.texts, msPerQuery: cost.queryMs / cost.queries } });
  }
  for (const [t, task] of tasks.entries()) {
    console.log(`\nDense signal alone (cosine over every turn) — ${task.name}`);
    console.log(scoreHeader('embedder', 30));
    for (const r of results) console.log(scoreLine(r.name, r.scores[t], 30));
  }
  console.log('\nCost (this process; RSS added by loading, approximate; the GloVe table is built once, then cached):');
  console.log(`${'embedder'.padEnd(30)}${'load ms'.padStart(9)}${'+RSS MB'.padStart(9)}${'ms/text'.padStart(9)}${'ms/query'.padStart(10)}`);
  for (const { name, cost } of results) {
    console.log(`${name.padEnd(30)}${cost.loadMs.toFixed(0).padStart(9)}${cost.rssMb.toFixed(0).padStart(9)}${cost.msPerText.toFixed(3).padStart(9)}${cost.msPerQuery.toFixed(3).padStart(10)}`);
  }
}
