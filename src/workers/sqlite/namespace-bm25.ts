// BM25 from one namespace's statistics, for a file whose FTS index holds several namespaces and
// a namespace too large to copy into its own index (namespace-index.ts: the usual way).
// FTS5's bm25() takes N, each term's document count and the average length from the whole
// table, so another tenant's words would move this tenant's scores (and explain shows them).
// Here the same formula (fts5_aux.c, fts5Bm25Function, with the rank's column weights) is
// computed from the namespace's own figures: N and total tokens from namespace_text_stats
// (kept by triggers, migration 7), each term's occurrences from the index's instance list
// (fts5vocab), each row's length from memories_fts_docsize. The arithmetic follows the C code
// operation by operation (and takes log() from SQLite's C library), so a namespace alone in
// its file scores exactly what FTS5 gives it, and a namespace's scores do not depend on others.
// A query's terms are single words (recall/query-text.ts); FTS5 stems them (porter) through a
// temporary FTS5 table with the index's tokenizer, so the instance list is looked up by stem.
import type { Db } from '../../shared/db.js';
import { prepareOnce } from '../../shared/connection-statements.js';
import { BoundedMap } from '../../shared/bounded-map.js';
import { docSizeTokens } from '../../shared/fts-doc-size.js';
import type { Proposal, RecallContext } from '../port/candidates.js';
import { FILTER_SQL, filterParams } from './filter.js';

/** FTS5's bm25 constants. */
const K1 = 1.2;
const B = 0.75;
/** The rank's column weights (migration 6: bm25(1.0, 0.3)). */
const COLUMN_WEIGHT: Record<string, number> = { content: 1.0, context: 0.3 };
/** Stems of recent query words, per thread. */
const STEM_CACHE = 4096;

const stems = new WeakMap<Db, BoundedMap<string, string | null>>();

interface Occurrences {
  /** Per matching row of the namespace: the term's weighted frequency (FTS5's aFreq). */
  frequency: Map<number, number>;
  idf: number;
}

export class NamespaceBm25 {
  private readonly othersHold;
  private readonly stats;
  private readonly instances;
  private readonly idf;
  private readonly rows;
  private readonly stemOf;
  private readonly clearStems;
  private readonly addStem;
  private readonly readStems;

  constructor(db: Db, private readonly namespaceId: number) {
    // Temporary objects live in the connection's own temp schema: fine on a read-only file.
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stems USING fts5(word, tokenize = 'porter unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stem_tokens USING fts5vocab(temp, query_stems, instance);
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_instances USING fts5vocab(main, memories_fts, instance);`);
    this.othersHold = prepareOnce<[number], number>(db,
      'SELECT EXISTS (SELECT 1 FROM namespace_text_stats WHERE namespace_id != ? AND documents > 0)', 'pluck');
    this.stats = prepareOnce<[number], { documents: number; tokens: number }>(db,
      'SELECT documents, tokens FROM namespace_text_stats WHERE namespace_id = ?');
    // Every namespace's occurrences (the index has no namespace column); rows of others are
    // dropped by `rows` below, in one statement for all of them.
    this.instances = prepareOnce<[string], { rowid: number; col: string }>(db, 'SELECT doc AS rowid, col FROM temp.memories_fts_instances WHERE term = ?');
    // FTS5: idf = log((nRow - nHit + 0.5) / (nHit + 0.5)), at least 1e-6.
    this.idf = prepareOnce<[number, number, number], number>(db, 'SELECT ln((? - ? + 0.5) / (? + 0.5))', 'pluck');
    // The namespace's rows among them: whether each passes the filter, and its length.
    this.rows = prepareOnce<Record<string, unknown>, { rowid: number; passes: number; sz: Buffer }>(db, `SELECT m.rowid AS rowid,
        (${FILTER_SQL}) AS passes, d.sz AS sz
      FROM json_each(@rowids) j CROSS JOIN memories m ON m.rowid = j.value CROSS JOIN memories_fts_docsize d ON d.id = m.rowid
      WHERE m.namespace_id = @ns`);
    this.clearStems = prepareOnce(db, 'DELETE FROM temp.query_stems');
    this.addStem = prepareOnce<[number, string]>(db, 'INSERT INTO temp.query_stems (rowid, word) VALUES (?, ?)');
    this.readStems = prepareOnce<[], { doc: number; term: string }>(db, 'SELECT doc, term FROM temp.query_stem_tokens ORDER BY doc, offset');
    let cache = stems.get(db);
    if (cache === undefined) stems.set(db, cache = new BoundedMap(STEM_CACHE));
    this.stemOf = cache;
  }

  /** Whether another namespace has rows in the index: then FTS5's own bm25 would mix them in. */
  shared(): boolean {
    return this.othersHold.get(this.namespaceId) === 1;
  }

  /** The `depth` best rows passing the filter that match any term, ranked as FTS5's ORDER BY rank, rowid. */
  retrieve(terms: string[], ctx: RecallContext): Proposal[] {
    const stats = this.stats.get(this.namespaceId);
    if (stats === undefined || stats.documents === 0) return [];
    const avgdl = stats.tokens / stats.documents;
    const counted = this.stemmed(terms).map((stem) => this.counts(stem));
    const anywhere = new Set<number>();
    for (const byRow of counted) for (const rowid of byRow.keys()) anywhere.add(rowid);
    if (anywhere.size === 0) return [];
    const mine = this.rows.all({ rowids: JSON.stringify([...anywhere]), ...filterParams(this.namespaceId, ctx.filter) });
    const inNamespace = new Set(mine.map((row) => row.rowid));
    const phrases = counted.map((byRow) => this.phrase(byRow, inNamespace, stats.documents));
    const scored: Proposal[] = [];
    for (const { rowid, passes, sz } of mine) {
      if (passes !== 1) continue;
      const D = docSizeTokens(sz);
      let score = 0.0;
      let matched = false;
      for (const { frequency, idf } of phrases) {
        const f = frequency.get(rowid) ?? 0;
        if (f > 0) matched = true;
        score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * D / avgdl)));
      }
      if (matched) scored.push({ rowid, score });
    }
    scored.sort((a, b) => b.score - a.score || a.rowid - b.rowid);
    return scored.slice(0, ctx.depth);
  }

  /** A stem's occurrences by row, every namespace's: [content, context] counts. */
  private counts(stem: string | null): Map<number, [number, number]> {
    const byRow = new Map<number, [number, number]>();
    if (stem === null) return byRow;
    for (const { rowid, col } of this.instances.iterate(stem)) {
      let counts = byRow.get(rowid);
      if (counts === undefined) byRow.set(rowid, counts = [0, 0]);
      counts[col === 'content' ? 0 : 1] += 1;
    }
    return byRow;
  }

  /** The term's weighted frequency per row of the namespace, and its idf from the namespace's counts. */
  private phrase(byRow: Map<number, [number, number]>, inNamespace: Set<number>, documents: number): Occurrences {
    const frequency = new Map<number, number>();
    for (const [rowid, [content, context]] of byRow) {
      if (!inNamespace.has(rowid)) continue;
      // FTS5 adds the column weight of each instance in (column, offset) order: content's first.
      let f = 0;
      for (let i = 0; i < content; i++) f += COLUMN_WEIGHT.content;
      for (let i = 0; i < context; i++) f += COLUMN_WEIGHT.context;
      frequency.set(rowid, f);
    }
    const idf = this.idf.get(documents, frequency.size, frequency.size)!;
    return { frequency, idf: idf <= 0.0 ? 1e-6 : idf };
  }

  /** Each term's stem in the index (null: the word is no single token there, so it matches nothing here). */
  private stemmed(terms: string[]): (string | null)[] {
    const missing = terms.filter((term) => this.stemOf.get(term) === undefined);
    if (missing.length > 0) {
      this.clearStems.run();
      missing.forEach((word, i) => this.addStem.run(i + 1, word));
      const tokens = new Map<number, string[]>();
      for (const { doc, term } of this.readStems.iterate()) tokens.set(doc, [...(tokens.get(doc) ?? []), term]);
      missing.forEach((word, i) => {
        const found = tokens.get(i + 1) ?? [];
        this.stemOf.set(word, found.length === 1 ? found[0] : null);
      });
      this.clearStems.run();
    }
    return terms.map((term) => this.stemOf.get(term)!);
  }
}
