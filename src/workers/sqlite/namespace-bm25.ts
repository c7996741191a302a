// BM25 from one namespace's statistics, for a file whose FTS index holds several namespaces.
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
  private readonly docSize;
  private readonly passing;
  private readonly stemOf;
  private readonly clearStems;
  private readonly addStem;
  private readonly readStems;

  constructor(db: Db, private readonly namespaceId: number) {
    // Temporary objects live in the connection's own temp schema: fine on a read-only file.
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stems USING fts5(word, tokenize = 'porter unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stem_tokens USING fts5vocab(temp, query_stems, instance);
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_instances USING fts5vocab(main, memories_fts, instance);`);
    this.othersHold = db.prepare<[number], number>(
      'SELECT EXISTS (SELECT 1 FROM namespace_text_stats WHERE namespace_id != ? AND documents > 0)').pluck();
    this.stats = db.prepare<[number], { documents: number; tokens: number }>(
      'SELECT documents, tokens FROM namespace_text_stats WHERE namespace_id = ?');
    this.instances = db.prepare<[string, number], { rowid: number; col: string }>(`SELECT i.doc AS rowid, i.col AS col
      FROM temp.memories_fts_instances i CROSS JOIN memories m ON m.rowid = i.doc
      WHERE i.term = ? AND m.namespace_id = ?`);
    // FTS5: idf = log((nRow - nHit + 0.5) / (nHit + 0.5)), at least 1e-6.
    this.idf = db.prepare<[number, number, number], number>('SELECT ln((? - ? + 0.5) / (? + 0.5))').pluck();
    this.docSize = db.prepare<[number], Buffer>('SELECT sz FROM memories_fts_docsize WHERE id = ?').pluck();
    this.passing = db.prepare<Record<string, unknown>, number>(
      `SELECT m.rowid FROM json_each(@rowids) j CROSS JOIN memories m ON m.rowid = j.value WHERE ${FILTER_SQL}`).pluck();
    this.clearStems = db.prepare('DELETE FROM temp.query_stems');
    this.addStem = db.prepare<[number, string]>('INSERT INTO temp.query_stems (rowid, word) VALUES (?, ?)');
    this.readStems = db.prepare<[], { doc: number; term: string }>('SELECT doc, term FROM temp.query_stem_tokens ORDER BY doc, offset');
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
    const phrases = this.stemmed(terms).map((stem) => this.occurrences(stem, stats.documents));
    const matching = new Set<number>();
    for (const { frequency } of phrases) for (const rowid of frequency.keys()) matching.add(rowid);
    if (matching.size === 0) return [];
    const rowids = this.passing.all({ rowids: JSON.stringify([...matching]), ...filterParams(this.namespaceId, ctx.filter) });
    const scored = rowids.map((rowid) => {
      const D = docSizeTokens(this.docSize.get(rowid)!);
      let score = 0.0;
      for (const { frequency, idf } of phrases) {
        const f = frequency.get(rowid) ?? 0;
        score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * D / avgdl)));
      }
      return { rowid, score };
    });
    scored.sort((a, b) => b.score - a.score || a.rowid - b.rowid);
    return scored.slice(0, ctx.depth);
  }

  private occurrences(stem: string | null, documents: number): Occurrences {
    const frequency = new Map<number, number>();
    if (stem === null) return { frequency, idf: 0 };
    // FTS5 adds the column weight of each instance in (column, offset) order: content's first.
    const byRow = new Map<number, { content: number; context: number }>();
    for (const { rowid, col } of this.instances.iterate(stem, this.namespaceId)) {
      let counts = byRow.get(rowid);
      if (counts === undefined) byRow.set(rowid, counts = { content: 0, context: 0 });
      counts[col as 'content' | 'context'] += 1;
    }
    for (const [rowid, counts] of byRow) {
      let f = 0;
      for (let i = 0; i < counts.content; i++) f += COLUMN_WEIGHT.content;
      for (let i = 0; i < counts.context; i++) f += COLUMN_WEIGHT.context;
      frequency.set(rowid, f);
    }
    const idf = this.idf.get(documents, byRow.size, byRow.size)!;
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
