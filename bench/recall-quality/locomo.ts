// Recall quality on real multi-session conversations (the LoCoMo dev split), through the real
// HTTP service as a user would see it: one fresh store (server process) per conversation, each
// session an episode, each turn a message "Speaker: text", every question of categories 1–4
// asked with POST /v1/recall, limit 10, types ["episodic"]. Printed per conversation set:
// - evidence R@1/5/10 and MRR, overall and per category, next to a plain FTS5 BM25 (unicode61,
//   no stemming, no stopword list) over the same turns, computed in the same run;
// - "asked at once": every question sent concurrently right after the writes, while the
//   embedding backlog is still draining;
// - stability: the same questions again, in order and in reverse order, compared with the first
//   drained pass (R@10 change, questions whose top 10 changed);
// - recall latency p50/p95 at concurrency 1 (client-side, drained pass).
// Only aggregate figures are printed: nothing of the data set's text leaves this process.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type ServerProcess } from '../lib/processes.js';
import type { BenchEmbedder } from './synthetic.js';
import { tokenize } from '../../src/workers/recall/query-text.js';
import { loadLocomo, locomoPath, type Conversation } from './locomo-data.js';
import { percentile, scoreHeader, scoreLine, scoreRankings, type Scores } from './scoring.js';

const LIMIT = 10;
const CATEGORIES = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' } as const;

/** Question key → ranked dia ids (the evidence namespace), plus latencies of that pass. */
interface Pass {
  ranked: Map<string, string[]>;
  latencies: number[];
}

interface ConversationRun {
  evidence: Map<string, Set<string>>;
  category: Map<string, number>;
  baseline: Map<string, string[]>;
  atOnce: Pass;
  backlogAtStart: number;
  drained: Pass;
  repeat: Pass;
  reverse: Pass;
}

export async function post<T>(base: string, path: string, body: unknown): Promise<T> {
  const response = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function backlog(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^memory_runtime_embedding_backlog\s+(\S+)/m.exec(text)?.[1] ?? NaN);
}

export async function drain(base: string): Promise<void> {
  while ((await backlog(base)) > 0) await new Promise((r) => setTimeout(r, 200));
}

/** Plain BM25 over the turns: FTS5 unicode61 (no stemming), every query word OR-ed. */
export function plainBm25(conversation: Conversation): Map<string, string[]> {
  const db = new Database(':memory:');
  db.exec('CREATE VIRTUAL TABLE turns USING fts5(content, dia_id UNINDEXED, tokenize = "unicode61")');
  const insert = db.prepare('INSERT INTO turns (content, dia_id) VALUES (?, ?)');
  for (const turn of conversation.sessions.flat()) insert.run(`${turn.speaker}: ${turn.text}`, turn.diaId);
  const query = db.prepare<[string, number], { dia_id: string }>('SELECT dia_id FROM turns WHERE turns MATCH ? ORDER BY rank LIMIT ?');
  const ranked = new Map<string, string[]>();
  for (const q of conversation.questions) {
    const words = tokenize(q.text);
    ranked.set(key(conversation, q.index), words.length === 0 ? [] : query.all(words.map((w) => `"${w}"`).join(' OR '), LIMIT).map((r) => r.dia_id));
  }
  db.close();
  return ranked;
}

export const key = (conversation: Conversation, index: number) => `${conversation.id}#${index}`;

/** A question asked through the service: dia ids of the results, and the client-side latency. */
/** Each stored turn's memory id → its LoCoMo dia id; `episodes[i]` holds session i. */
export function diaIdsOf(dbPath: string, conversation: Conversation, episodes: string[]): Map<string, string> {
  const sessionOf = new Map(episodes.map((id, i) => [id, i]));
  const file = new Database(dbPath, { readonly: true });
  const diaOf = new Map<string, string>();
  for (const row of file.prepare("SELECT id, episode_id, seq FROM memories WHERE memory_type = 'episodic'").all() as { id: string; episode_id: string; seq: number }[]) {
    const turn = conversation.sessions[sessionOf.get(row.episode_id)!]?.[row.seq];
    if (turn) diaOf.set(row.id, turn.diaId);
  }
  file.close();
  return diaOf;
}

export type Ask = (index: number) => Promise<{ ids: string[]; ms: number }>;

/** Writes the conversation into the service (one episode per session) and returns how to ask it. */
export async function storeConversation(base: string, dbPath: string, conversation: Conversation): Promise<Ask> {
  const episodes: string[] = [];
  for (const session of conversation.sessions) {
    const { episode_id } = await post<{ episode_id: string }>(base, '/v1/episodes/start', { participants: conversation.speakers });
    episodes.push(episode_id);
    for (const turn of session) await post(base, `/v1/episodes/${episode_id}/message`, { role: 'user', content: `${turn.speaker}: ${turn.text}` });
  }
  // Memory id → dia id, read from the file (the message endpoint returns no id).
  const diaOf = diaIdsOf(dbPath, conversation, episodes);
  return async (index) => {
    const started = performance.now();
    const { memories } = await post<{ memories: { id: string }[] }>(base, '/v1/recall',
      { query: conversation.questions[index].text, limit: LIMIT, types: ['episodic'] });
    return { ids: memories.map((m) => diaOf.get(m.id) ?? m.id), ms: performance.now() - started };
  };
}

async function runConversation(conversation: Conversation, embedder: BenchEmbedder): Promise<ConversationRun> {
  const dir = mkdtempSync(join(tmpdir(), 'locomo-'));
  const dbPath = join(dir, 'memory.db');
  const server: ServerProcess = await startService({ dbPath, embedder});
  try {
    const base = server.base;
    const ask = await storeConversation(base, dbPath, conversation);
    const pass = async (order: number[], concurrent = false): Promise<Pass> => {
      const ranked = new Map<string, string[]>();
      const latencies: number[] = [];
      const one = async (i: number) => {
        const { ids, ms } = await ask(i);
        ranked.set(key(conversation, i), ids);
        latencies.push(ms);
      };
      if (concurrent) await Promise.all(order.map(one));
      else for (const i of order) await one(i);
      return { ranked, latencies };
    };
    const inOrder = conversation.questions.map((q) => q.index);
    const backlogAtStart = await backlog(base);
    const atOnce = await pass(inOrder, true);
    await drain(base);
    const drained = await pass(inOrder);
    const repeat = await pass(inOrder);
    const reverse = await pass([...inOrder].reverse());
    return {
      evidence: new Map(conversation.questions.map((q) => [key(conversation, q.index), new Set(q.evidence)])),
      category: new Map(conversation.questions.map((q) => [key(conversation, q.index), q.category])),
      baseline: plainBm25(conversation),
      atOnce, backlogAtStart, drained, repeat, reverse,
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const merge = <K, V>(maps: Map<K, V>[]) => new Map(maps.flatMap((m) => [...m]));

function changed(a: Map<string, string[]>, b: Map<string, string[]>, top: number): number {
  let n = 0;
  for (const [q, ids] of a) if (ids.slice(0, top).join() !== (b.get(q) ?? []).slice(0, top).join()) n++;
  return n;
}

export async function runLocomo(embedder: BenchEmbedder): Promise<void> {
  const conversations = loadLocomo();
  if (!conversations) {
    console.log(`LoCoMo bench skipped: no data set at ${locomoPath()} (set BENCH_LOCOMO_DIR to its folder).`);
    return;
  }
  const runs: ConversationRun[] = [];
  for (const [i, conversation] of conversations.entries()) {
    process.stderr.write(`[bench] locomo conversation ${i + 1}/${conversations.length}: ${conversation.sessions.flat().length} turns, ${conversation.questions.length} questions\n`);
    runs.push(await runConversation(conversation, embedder));
  }
  const evidence = merge(runs.map((r) => r.evidence));
  const category = merge(runs.map((r) => r.category));
  const all = (pick: (r: ConversationRun) => Map<string, string[]>) => merge(runs.map(pick));
  const baseline = all((r) => r.baseline);
  const drained = all((r) => r.drained.ranked);
  const atOnce = all((r) => r.atOnce.ranked);
  const repeat = all((r) => r.repeat.ranked);
  const reverse = all((r) => r.reverse.ranked);
  const score = (ranked: Map<string, string[]>, only?: number) =>
    scoreRankings(ranked, only === undefined ? evidence : new Map([...evidence].filter(([q]) => category.get(q) === only)));
  const turns = conversations.reduce((n, c) => n + c.sessions.flat().length, 0);

  console.log(`\nRecall quality on real conversations — LoCoMo dev: ${conversations.length} conversations, ${turns} turns, ${evidence.size} questions; embedder ${embedder}; through HTTP, limit ${LIMIT}, types [episodic]`);
  console.log(scoreHeader('ranking'));
  const base = score(baseline);
  const fused = score(drained);
  const early = score(atOnce);
  console.log(scoreLine('plain BM25 (FTS5, no stemming)', base));
  console.log(scoreLine('service recall (backlog drained)', fused));
  const backlogs = runs.map((r) => r.backlogAtStart);
  console.log(scoreLine(`service recall, asked at once`, early));
  console.log(`  (asked at once: all questions sent together right after the writes; embedding backlog then ${Math.min(...backlogs)}–${Math.max(...backlogs)} turns)`);
  for (const [c, name] of Object.entries(CATEGORIES)) {
    const b = score(baseline, Number(c));
    const f = score(drained, Number(c));
    console.log(`  category ${c} ${name.padEnd(11)} (${String(b.questions).padStart(3)} q): service ${fmt(f)} | plain BM25 ${fmt(b)}`);
  }
  const ratio = (s: Scores, k: number) => (s.recall[k] / Math.max(base.recall[k], 1e-9)).toFixed(2);
  console.log(`service ÷ plain BM25: R@1 ×${ratio(fused, 1)}, R@5 ×${ratio(fused, 5)}, R@10 ×${ratio(fused, 10)}; asked at once R@10 ×${ratio(early, 10)}`);
  const r10 = (m: Map<string, string[]>) => score(m).recall[10];
  console.log(`stability: repeat R@10 Δ ${(r10(repeat) - r10(drained)).toFixed(4)}, top-10 changed for ${changed(drained, repeat, 10)}/${evidence.size}; ` +
    `reverse order R@10 Δ ${(r10(reverse) - r10(drained)).toFixed(4)}, top-1 changed for ${changed(drained, reverse, 1)}/${evidence.size}, top-10 for ${changed(drained, reverse, 10)}/${evidence.size}`);
  const latencies = runs.flatMap((r) => [...r.drained.latencies, ...r.repeat.latencies]);
  console.log(`recall latency at c=1 (client side, drained): p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms over ${latencies.length} requests`);
}

const fmt = (s: Scores) => `R@1 ${(s.recall[1] * 100).toFixed(1)} R@5 ${(s.recall[5] * 100).toFixed(1)} R@10 ${(s.recall[10] * 100).toFixed(1)} MRR ${s.mrr.toFixed(3)}`;
