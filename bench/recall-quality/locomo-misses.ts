// Where the evidence the ranking misses lies (aggregates only): for each question, the evidence
// turns outside the top 10 — their rank in the top 200, and whether they sit in the session of
// a top-10 hit and how far from it (in turns).
import { RecallEngine } from '../../src/workers/recall/engine.js';
import { cachedStores } from './cached-stores.js';
import { tokenize, queryTerms } from '../../src/workers/recall/query-text.js';

const { weights, reach, conversations, embedder, open } = await cachedStores();
const pos = (dia: string) => { const m = /^D(\d+):(\d+)$/.exec(dia); return m ? { s: Number(m[1]), t: Number(m[2]) } : null; };
const stats: Record<string, Record<string, number>> = {};
const bump = (cat: string, k: string, n = 1) => { (stats[cat] ??= {})[k] = (stats[cat][k] ?? 0) + n; };
for (const conversation of conversations) {
  const { db, diaOf, port } = open(conversation);
  const text = new Map(conversation.sessions.flat().map((t) => [t.diaId, `${t.speaker}: ${t.text}`]));
  const engine = new RecallEngine(port, { weights, reach });
  const df = new Map<string, number>();
  for (const t of conversation.sessions.flat()) for (const w of new Set(tokenize(`${t.speaker}: ${t.text}`))) df.set(w, (df.get(w) ?? 0) + 1);
  const nTurns = conversation.sessions.flat().length;
  const vectors = await embedder.embed(conversation.questions.map((q) => q.text));
  for (const [i, q] of conversation.questions.entries()) {
    const cat = `c${q.category}`;
    const hits = (await engine.recall({ query: q.text, entity: null, types: ['episodic'], limit: 200, queryVector: vectors[i] })).map((h) => diaOf.get(h.row.id) ?? h.row.id);
    const top = hits.slice(0, 10);
    const terms = queryTerms(q.text).filter((t) => (df.get(t) ?? 0) < 0.05 * nTurns);
    for (const e of q.evidence) {
      bump(cat, 'evidence');
      const rank = hits.indexOf(e);
      const words = new Set(tokenize(text.get(e) ?? ''));
      const shares = terms.filter((t) => words.has(t) || [...words].some((w) => w.length >= 5 && t.length >= 5 && w.slice(0, 5) === t.slice(0, 5))).length;
      const coveredByTop = new Set(top.flatMap((h) => tokenize(text.get(h) ?? '')));
      const uncovered = terms.filter((t) => !coveredByTop.has(t));
      if (rank >= 10 || rank < 0) { if (uncovered.length > 0) bump(cat, 'miss: question has terms uncovered by top10'); if (terms.filter((t) => uncovered.includes(t) && (words.has(t))).length > 0) bump(cat, 'miss: has an uncovered term'); }
      if (rank >= 0 && rank < 10) { bump(cat, 'found'); continue; }
      bump(cat, 'missed');
      bump(cat, rank < 0 ? 'miss: beyond 200' : rank < 20 ? 'miss: rank 11-20' : rank < 50 ? 'miss: rank 21-50' : 'miss: rank 51-200');
      bump(cat, shares > 0 ? 'miss: shares a rare query term (5-prefix)' : 'miss: shares no query term');
      const p = pos(e);
      const sameSession = top.map(pos).filter((h) => h && p && h.s === p.s);
      if (sameSession.length > 0) {
        bump(cat, 'miss: in a top-10 session');
        const d = Math.min(...sameSession.map((h) => Math.abs(h!.t - p!.t)));
        bump(cat, d <= 1 ? 'miss: dist 1' : d <= 2 ? 'miss: dist 2' : d <= 4 ? 'miss: dist 3-4' : d <= 8 ? 'miss: dist 5-8' : 'miss: dist >8');
      }
      const foundEv = q.evidence.filter((x) => top.includes(x)).map(pos);
      if (foundEv.some((h) => h && p && h.s === p.s)) bump(cat, 'miss: same session as a found evidence');
    }
  }
  db.close();
}
for (const [cat, s] of Object.entries(stats).sort()) console.log(cat, JSON.stringify(s));
