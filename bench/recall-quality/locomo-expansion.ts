// Measures document expansion (word-expansion.ts) on the LoCoMo dev stores locomo-tune wrote,
// before any write path exists: each turn's nearest vocabulary words are computed here from its
// stored vector and indexed, beside its own words and its previous turn's, in a third column of
// an in-memory FTS5 table (same tokenizer as memories_fts); the engine's lexical probe reads that
// table, ranked bm25(1.0, 0.3, x). Everything else is the real engine on the real store.
//
//   node dist/bench/recall-quality/locomo-expansion.js <cache> 'real' 'k=0' 'x=0.3,k=10' 'real,noname=1' 'real,proj=1' …
//
// Settings: x (the expansion column's bm25 weight), k (words per turn; k=0 gives exactly 'real''s
// rankings), qk (the query's nearest words added to its terms), centre (1: the word table
// centred), noname / proj (the query vector without the people it names: unnamed-query.ts), any
// other name=value an engine weight; 'real' = the store's own lexical probe. Prints, per (k,
// centre), how often an evidence turn's expansion holds a question word against how often any
// turn's does, and how many of the first setting's missed evidence turns it could reach; then
// R@1/5/10, MRR and R@10 per category (TUNE_PER_CONVERSATION=1: also per conversation).
import { RecallEngine, type SignalName } from '../../src/workers/recall/engine.js';
import type { Proposal, RecallContext } from '../../src/workers/port/candidates.js';
import { ExpansionIndex, withLexical } from './expanded-lexical.js';
import { tokenize } from '../../src/workers/recall/query-text.js';
import { cachedStores } from './cached-stores.js';
import { scoreRankings, perConversationTable } from './scoring.js';
import { nearestWords, wordTable, type WordTable } from './word-expansion.js';
import { mixed, namesIn, projectedOut, withoutNames } from './unnamed-query.js';

interface Setting { name: string; real: boolean; x: number; k: number; qk: number; noname: number; proj: number; centre: boolean; weights: Partial<Record<SignalName, number>> }
const parse = (name: string): Setting => {
  const kv = Object.fromEntries(name.split(',').filter((s) => s.includes('=')).map((s) => [s.split('=')[0], Number(s.split('=')[1])]));
  const { x = 0, k = 10, qk = 0, noname = 0, proj = 0, centre = 0, ...weights } = kv;
  return { name, real: name.split(',').includes('real'), x, k, qk, noname, proj, centre: centre === 1, weights };
};

const { conversations, embedder, open } = await cachedStores();
const settings = process.argv.slice(3).map(parse);
if (settings.length === 0) settings.push(parse('real'), parse('x=0'));
const tables = new Map<boolean, WordTable>();
for (const centre of new Set(settings.filter((s) => !s.real || s.qk > 0).map((s) => s.centre))) tables.set(centre, await wordTable(centre));
const maxK = Math.max(...settings.map((s) => s.k));

const ranked = settings.map(() => new Map<string, string[]>());
const evidence = new Map<string, Set<string>>();
const category = new Map<string, number>();
// Diagnostic, per (k, centre) and category: evidence turns whose expansion holds a question word, and all turns'.
const holds: Record<string, { evidence: number; evidenceHeld: number; turns: number; turnsHeld: number }> = {};
const stem = (w: string) => w.slice(0, 5);
// The evidence turns whose expansion (the first expanding setting's k and table) holds a question word, by question.
const heldEvidence = new Map<string, Set<string>>();

for (const conversation of conversations) {
  const { db, diaOf, port } = open(conversation);
  const rows = db.prepare("SELECT rowid AS rowid, id, content, context FROM memories WHERE memory_type = 'episodic'").all() as { rowid: number; id: string; content: string; context: string }[];
  const stored = await port.snapshot((reads) => reads.vectors(rows.map((r) => r.rowid)));
  const expansions = new Map<boolean, Map<number, string[]>>();
  for (const [centre, table] of tables) {
    const own = new Map<number, string[]>();
    for (const r of rows) {
      const vector = stored.get(r.rowid);
      const words = new Set(tokenize(r.content));
      // The turn's own words are indexed already: only what it does not say is an expansion.
      own.set(r.rowid, vector ? nearestWords(table, vector, maxK + 20).filter((w) => !words.has(w)).slice(0, maxK) : []);
    }
    expansions.set(centre, own);
  }
  const rowidOfDia = new Map(rows.flatMap((r) => (diaOf.has(r.id) ? [[diaOf.get(r.id)!, r.rowid] as const] : [])));
  for (const q of conversation.questions) {
    evidence.set(`${conversation.id}#${q.index}`, new Set(q.evidence));
    category.set(`${conversation.id}#${q.index}`, q.category);
    const terms = new Set(tokenize(q.text).filter((w) => w.length > 2 && !conversation.speakers.some((s) => s.toLowerCase() === w)).map(stem));
    const seen = new Set<string>();
    for (const s of settings.filter((setting) => !setting.real)) {
      const key = `k=${s.k} centre=${s.centre ? 1 : 0} c${q.category}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const h = (holds[key] ??= { evidence: 0, evidenceHeld: 0, turns: 0, turnsHeld: 0 });
      const held = (rowid: number) => (expansions.get(s.centre)!.get(rowid) ?? []).slice(0, s.k).some((w) => terms.has(stem(w)));
      const first = s === settings.find((setting) => !setting.real);
      for (const e of q.evidence) {
        const rowid = rowidOfDia.get(e);
        if (rowid === undefined) continue;
        h.evidence++;
        if (held(rowid)) {
          h.evidenceHeld++;
          if (first) (heldEvidence.get(`${conversation.id}#${q.index}`) ?? heldEvidence.set(`${conversation.id}#${q.index}`, new Set()).get(`${conversation.id}#${q.index}`)!).add(e);
        }
      }
      h.turns += rows.length;
      for (const r of rows) if (held(r.rowid)) h.turnsHeld++;
    }
  }
  const vectors = await embedder.embed(conversation.questions.map((q) => q.text));
  // noname: the question re-embedded without the people it names, mixed in `noname`; proj: the
  // names' own vectors projected out of the question's (unnamed-query.ts).
  const named = conversation.questions.map((q) => namesIn(q.text, conversation.speakers));
  const unnamed = await embedder.embed(conversation.questions.map((q, i) => withoutNames(q.text, named[i])));
  const nameVector = new Map((await embedder.embed(conversation.speakers)).map((v, i) => [conversation.speakers[i], v]));
  const queryVector = (setting: Setting, i: number) => {
    if (setting.noname > 0) return mixed(vectors[i], unnamed[i], setting.noname);
    if (setting.proj > 0) return projectedOut(vectors[i], named[i].map((n) => nameVector.get(n)!), setting.proj);
    return vectors[i];
  };

  for (const [s, setting] of settings.entries()) {
    let engine: RecallEngine;
    let index: ExpansionIndex | null = null;
    if (setting.real) engine = new RecallEngine(port, { weights: setting.weights });
    else {
      const words = expansions.get(setting.centre)!;
      const expanded = (index = new ExpansionIndex(rows, (rowid) => (words.get(rowid) ?? []).slice(0, setting.k)));
      const lexical = (ctx: RecallContext): Proposal[] => {
        // qk: the query's own nearest words join its terms (query expansion in the same space).
        const extra = setting.qk > 0 && ctx.queryVector ? nearestWords(tables.get(setting.centre)!, ctx.queryVector, setting.qk + ctx.terms.length).filter((w) => !ctx.terms.includes(w)).slice(0, setting.qk) : [];
        return expanded.rank([...ctx.terms, ...extra], ctx.depth, [1.0, 0.3, setting.x]);
      };
      engine = new RecallEngine(withLexical(port, lexical), { weights: setting.weights });
    }
    const now = Date.now();
    for (const [i, q] of conversation.questions.entries()) {
      const hits = await engine.recall({ query: q.text, entity: null, types: ['episodic'], limit: 10, queryVector: queryVector(setting, i) }, now);
      ranked[s].set(`${conversation.id}#${q.index}`, hits.map((h) => diaOf.get(h.row.id) ?? h.row.id));
    }
    index?.close();
  }
  db.close();
}

const p = (x: number) => (x * 100).toFixed(1).padStart(5);
console.log('expansion holds a question word (not a speaker name; 5-letter prefix): evidence turns vs all turns, %');
for (const [key, h] of Object.entries(holds).sort()) console.log(`  ${key.padEnd(28)} evidence ${p(h.evidenceHeld / h.evidence)} of ${h.evidence}   all turns ${p(h.turnsHeld / h.turns)}`);
if (heldEvidence.size > 0) {
  // What the expansion could reach: the first setting's misses (outside its top 10) whose expansion holds a question word.
  for (const c of [1, 2, 3, 4]) {
    let missed = 0;
    let reachable = 0;
    for (const [q, ids] of evidence) {
      if (category.get(q) !== c) continue;
      const top = ranked[0].get(q) ?? [];
      for (const e of ids) if (!top.includes(e)) { missed++; if (heldEvidence.get(q)?.has(e)) reachable++; }
    }
    console.log(`  c${c}: ${settings[0].name}'s missed evidence turns ${missed}, whose expansion holds a question word ${reachable}`);
  }
}
const only = (c: number) => new Map([...evidence].filter(([q]) => category.get(q) === c));
console.log(`${'setting'.padEnd(44)}  R@1   R@5  R@10   MRR | multi temp open single (R@10)`);
for (const [s, setting] of settings.entries()) {
  const all = scoreRankings(ranked[s], evidence);
  const cat = [1, 2, 3, 4].map((c) => p(scoreRankings(ranked[s], only(c)).recall[10]));
  console.log(`${setting.name.padEnd(44)} ${p(all.recall[1])} ${p(all.recall[5])} ${p(all.recall[10])} ${all.mrr.toFixed(3)} | ${cat.join(' ')}`);
}
// Per conversation (TUNE_PER_CONVERSATION=1): R@10 and multi-hop R@10 of each setting in each conversation.
if (process.env.TUNE_PER_CONVERSATION === '1') console.log(perConversationTable(settings.map((x) => x.name), ranked, evidence, category, conversations.map((c) => c.id), 44));
