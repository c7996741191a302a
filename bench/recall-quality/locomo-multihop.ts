// What the multi-hop evidence the ranking misses has in common with the question and with the
// evidence it finds (aggregates only, nothing of the text is printed):
//   node dist/bench/recall-quality/locomo-multihop.js <cache> [setting]
// For each missed evidence turn (outside the top 10): its rank by the fused ranking, by the
// question's cosine alone, and by its best cosine to one of the top 10 hits (the "more like what
// was found" signal); whether it shares a rare word (under 5% of the conversation's turns) with
// the question or with a found evidence turn; same session / same speaker as a found one; and
// whether it is by the speaker the question names.
import { RecallEngine } from '../../src/workers/recall/engine.js';
import { cachedStores } from './cached-stores.js';
import { tokenize, queryTerms } from '../../src/workers/recall/query-text.js';

const { weights, reach, conversations, embedder, open } = await cachedStores();
const stats: Record<string, Record<string, number>> = {};
const bump = (cat: string, k: string, n = 1) => { (stats[cat] ??= {})[k] = (stats[cat][k] ?? 0) + n; };
const bucket = (rank: number) => (rank < 10 ? '1-10' : rank < 20 ? '11-20' : rank < 50 ? '21-50' : rank < 200 ? '51-200' : '>200');
const dot = (a: Float32Array, b: Float32Array) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; };
const unit = (v: Float32Array) => { const n = Math.sqrt(dot(v, v)) || 1; return v.map((x) => x / n); };

for (const conversation of conversations) {
  const { db, diaOf, port } = open(conversation);
  const turns = conversation.sessions.flat();
  const turnOf = new Map(turns.map((t) => [t.diaId, t]));
  const sessionOf = new Map(conversation.sessions.flatMap((s, i) => s.map((t) => [t.diaId, i] as const)));
  const rowidOf = new Map<string, number>();
  for (const r of db.prepare("SELECT rowid AS rowid, id FROM memories WHERE memory_type = 'episodic'").all() as { rowid: number; id: string }[]) {
    const dia = diaOf.get(r.id);
    if (dia) rowidOf.set(dia, r.rowid);
  }
  const stored = await port.snapshot((reads) => reads.vectors([...rowidOf.values()]));
  const vectorOf = new Map([...rowidOf].flatMap(([dia, rowid]) => (stored.get(rowid) ? [[dia, unit(stored.get(rowid)!)] as const] : [])));
  const engine = new RecallEngine(port, { weights, reach });
  const df = new Map<string, number>();
  for (const t of turns) for (const w of new Set(tokenize(t.text))) df.set(w, (df.get(w) ?? 0) + 1);
  const rare = (text: string) => new Set(tokenize(text).filter((w) => (df.get(w) ?? 0) < 0.05 * turns.length && w.length > 2));
  const vectors = await embedder.embed(conversation.questions.map((q) => q.text));
  for (const [i, q] of conversation.questions.entries()) {
    const cat = `c${q.category}`;
    const hits = (await engine.recall({ query: q.text, entity: null, types: ['episodic'], limit: 200, queryVector: vectors[i] })).map((h) => diaOf.get(h.row.id) ?? h.row.id);
    const top = hits.slice(0, 10);
    bump(cat, 'questions');
    bump(cat, `evidence per question ${Math.min(q.evidence.length, 5)}${q.evidence.length >= 5 ? '+' : ''}`);
    const named = conversation.speakers.filter((s) => tokenize(q.text).includes(s.toLowerCase()));
    bump(cat, `names ${named.length} speaker(s)`);
    const qv = unit(vectors[i]);
    const byQuestion = [...vectorOf].map(([dia, v]) => [dia, dot(qv, v)] as const).sort((a, b) => b[1] - a[1]).map(([d]) => d);
    const topVectors = top.flatMap((d) => (vectorOf.get(d) ? [vectorOf.get(d)!] : []));
    const byTop = [...vectorOf].filter(([d]) => !top.includes(d))
      .map(([dia, v]) => [dia, Math.max(...topVectors.map((t) => dot(t, v)))] as const).sort((a, b) => b[1] - a[1]).map(([d]) => d);
    const found = q.evidence.filter((e) => top.includes(e));
    const qRare = rare(q.text);
    const foundRare = new Set(found.flatMap((e) => [...rare(turnOf.get(e)?.text ?? '')]));
    const topRare = new Set(top.flatMap((e) => [...rare(turnOf.get(e)?.text ?? '')]));
    for (const e of q.evidence) {
      const rank = hits.indexOf(e);
      if (rank >= 0 && rank < 10) { bump(cat, 'found'); continue; }
      bump(cat, 'missed');
      bump(cat, `miss fused rank ${bucket(rank < 0 ? 999 : rank)}`);
      bump(cat, `miss question-cosine rank ${bucket(byQuestion.indexOf(e))}`);
      bump(cat, `miss best-cosine-to-top10 rank ${bucket(byTop.indexOf(e))}`);
      const words = rare(turnOf.get(e)?.text ?? '');
      if ([...words].some((w) => qRare.has(w))) bump(cat, 'miss shares a rare word with the question');
      if ([...words].some((w) => qRare.has(w) && !topRare.has(w))) bump(cat, 'miss holds a rare question word the top 10 lacks');
      if (found.length > 0) {
        bump(cat, 'miss where some evidence was found');
        if ([...words].some((w) => foundRare.has(w))) bump(cat, '.. shares a rare word with found evidence');
        if (found.some((f) => sessionOf.get(f) === sessionOf.get(e))) bump(cat, '.. same session as found evidence');
        if (found.some((f) => turnOf.get(f)?.speaker === turnOf.get(e)?.speaker)) bump(cat, '.. same speaker as found evidence');
      } else bump(cat, 'miss where no evidence was found');
      if (named.length === 1) bump(cat, turnOf.get(e)?.speaker === named[0] ? 'miss by the one named speaker' : 'miss by the other speaker');
      if (top.some((h) => sessionOf.get(h) === sessionOf.get(e))) bump(cat, 'miss in a top-10 session');
    }
    const sessions = new Set(q.evidence.map((e) => sessionOf.get(e)));
    bump(cat, `evidence sessions ${Math.min(sessions.size, 4)}${sessions.size >= 4 ? '+' : ''}`);
  }
  db.close();
}
for (const [cat, s] of Object.entries(stats).sort()) {
  console.log(cat);
  for (const [k, v] of Object.entries(s).sort()) console.log(`  ${k.padEnd(52)} ${v}`);
}
