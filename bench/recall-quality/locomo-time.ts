// Recall quality with event time (issue 26, docs/time.md): the LoCoMo dev conversations written
// through POST /v1/episodes/import, one call per session, twice in the same run —
// - dated: the episode's `started_at` is the session's real date (`session_N_date_time`, read as
//   UTC: the data set gives no zone) and turn i `occurred_at` = that date + i seconds, so turns
//   keep their order inside the session's minute;
// - undated: the same calls without `started_at`/`occurred_at` (everything "now") —
// next to plain FTS5 BM25 over the same turns. Questions are asked after the conversation: on
// the dated store with `as_of` = the last turn's `occurred_at` (the moment the conversation
// ended: relative expressions — "last week", "in June" — are read from there, and nothing of
// the conversation lies after it), and once more with no `as_of` (asked today, years later);
// on the undated store with no `as_of` (its turns all happened "now"). Each store is its own
// server process, drained of its embedding backlog before the questions. Printed: R@1/5/10 and
// MRR overall and per category (2 = temporal), and how many questions name a time window by the
// service's own reading (query-time.ts). Only aggregates: nothing of the data set's text is
// written anywhere.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queryWindow } from '../../src/workers/recall/query-time.js';
import { startService } from '../lib/processes.js';
import { loadLocomo, locomoPath, type Conversation } from './locomo-data.js';
import { diaIdsOf, drain, key, plainBm25, post } from './locomo.js';
import { scoreHeader, scoreLine, scoreRankings, type Scores } from './scoring.js';
import type { BenchEmbedder } from './synthetic.js';

const LIMIT = 10;
const CATEGORIES = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' } as const;

type Ranked = Map<string, string[]>;

const iso = (ms: number) => new Date(ms).toISOString();

/** Turn i of session s was said at the session's date + i seconds. */
const turnTime = (conversation: Conversation, s: number, i: number) => conversation.sessionDates[s]! + i * 1000;

/** The moment the conversation ended: its last turn's time. */
function endOf(conversation: Conversation): number {
  const s = conversation.sessions.length - 1;
  return turnTime(conversation, s, conversation.sessions[s].length - 1);
}

/**
 * Imports the conversation (dated or not) into a fresh server and asks every question once per
 * `asOf` given (undefined: no as_of), after the embedding backlog drained.
 */
async function importAndAsk(conversation: Conversation, dated: boolean, asOfs: (number | undefined)[], embedder: BenchEmbedder): Promise<Ranked[]> {
  const dir = mkdtempSync(join(tmpdir(), 'locomo-time-'));
  const dbPath = join(dir, 'memory.db');
  const server = await startService({ dbPath, embedder });
  try {
    const episodes: string[] = [];
    for (const [s, session] of conversation.sessions.entries()) {
      const body = {
        participants: conversation.speakers,
        ...(dated ? { started_at: iso(conversation.sessionDates[s]!) } : {}),
        messages: session.map((turn, i) => ({
          role: 'user', content: `${turn.speaker}: ${turn.text}`, ...(dated ? { occurred_at: iso(turnTime(conversation, s, i)) } : {}),
        })),
      };
      episodes.push((await post<{ episode_id: string }>(server.base, '/v1/episodes/import', body)).episode_id);
    }
    const diaOf = diaIdsOf(dbPath, conversation, episodes);
    await drain(server.base);
    const passes: Ranked[] = [];
    for (const asOf of asOfs) {
      const ranked: Ranked = new Map();
      for (const q of conversation.questions) {
        const { memories } = await post<{ memories: { id: string }[] }>(server.base, '/v1/recall', {
          query: q.text, limit: LIMIT, types: ['episodic'], ...(asOf === undefined ? {} : { as_of: iso(asOf) }),
        });
        ranked.set(key(conversation, q.index), memories.map((m) => diaOf.get(m.id) ?? m.id));
      }
      passes.push(ranked);
    }
    return passes;
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runLocomoTime(embedder: BenchEmbedder): Promise<void> {
  const conversations = loadLocomo();
  if (!conversations) {
    console.log(`LoCoMo time bench skipped: no data set at ${locomoPath()} (set BENCH_LOCOMO_DIR to its folder).`);
    return;
  }
  const undatable = conversations.filter((c) => c.sessionDates.some((d) => d === null));
  if (undatable.length > 0) throw new Error(`session dates unreadable in ${undatable.map((c) => c.id).join(', ')}`);
  const dated: Ranked[] = [];
  const datedNow: Ranked[] = [];
  const undated: Ranked[] = [];
  const baseline: Ranked[] = [];
  const evidence = new Map<string, Set<string>>();
  const category = new Map<string, number>();
  const windowed = new Map<string, boolean>();
  for (const [i, conversation] of conversations.entries()) {
    process.stderr.write(`[bench] locomo-time conversation ${i + 1}/${conversations.length}: ${conversation.sessions.flat().length} turns, ${conversation.questions.length} questions\n`);
    const end = endOf(conversation);
    const [atEnd, now] = await importAndAsk(conversation, true, [end, undefined], embedder);
    dated.push(atEnd);
    datedNow.push(now);
    [undated[i]] = await importAndAsk(conversation, false, [undefined], embedder);
    baseline.push(plainBm25(conversation));
    for (const q of conversation.questions) {
      const k = key(conversation, q.index);
      evidence.set(k, new Set(q.evidence));
      category.set(k, q.category);
      windowed.set(k, queryWindow(q.text, end) !== null);
    }
  }
  const merged = (runs: Ranked[]) => new Map(runs.flatMap((m) => [...m]));
  const arms: [string, Ranked][] = [
    ['plain BM25 (FTS5, no stemming)', merged(baseline)],
    ['import, undated', merged(undated)],
    ['import, dated, as_of = end', merged(dated)],
    ['import, dated, asked now', merged(datedNow)],
  ];
  const score = (ranked: Ranked, only?: number) =>
    scoreRankings(ranked, only === undefined ? evidence : new Map([...evidence].filter(([q]) => category.get(q) === only)));
  const turns = conversations.reduce((n, c) => n + c.sessions.flat().length, 0);
  console.log(`\nRecall quality with event time — LoCoMo dev: ${conversations.length} conversations, ${turns} turns, ${evidence.size} questions; embedder ${embedder}; ` +
    `through POST /v1/episodes/import, recall limit ${LIMIT}, types [episodic]`);
  console.log(scoreHeader('all questions'));
  for (const [name, ranked] of arms) console.log(scoreLine(name, score(ranked)));
  for (const [c, name] of Object.entries(CATEGORIES)) {
    console.log(scoreHeader(`category ${c} ${name} (${score(arms[0][1], Number(c)).questions} q)`));
    for (const [arm, ranked] of arms) console.log(scoreLine(arm, score(ranked, Number(c))));
  }
  const windows = [...windowed].filter(([, w]) => w);
  const byCategory = Object.keys(CATEGORIES).map((c) => `${c}: ${windows.filter(([q]) => category.get(q) === Number(c)).length}`).join(', ');
  console.log(`questions whose text names a time window (query-time.ts, relative to the conversation's end): ${windows.length}/${evidence.size} (by category ${byCategory})`);
  if (windows.length > 0) {
    const only = new Map([...evidence].filter(([q]) => windowed.get(q)));
    const line = (name: string, ranked: Ranked) => `${name} ${fmt(scoreRankings(ranked, only))}`;
    console.log(`  on those: ${arms.map(([name, ranked]) => line(name, ranked)).join(' | ')}`);
  }
}

const fmt = (s: Scores) => `R@1 ${(s.recall[1] * 100).toFixed(1)} R@5 ${(s.recall[5] * 100).toFixed(1)} R@10 ${(s.recall[10] * 100).toFixed(1)}`;
