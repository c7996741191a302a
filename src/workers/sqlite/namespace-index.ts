// A small namespace's own full-text index, for ranking in a file that holds several namespaces.
// FTS5's bm25() takes N, each term's document count and the average length from the whole
// table, so in the shared memories_fts another tenant's words would move this tenant's scores.
// A namespace of at most NAMESPACE_INDEX_LIMIT memories is copied into a temporary FTS5 table
// of the connection (the same tokenizer, the same rank): there FTS5's own bm25() sees exactly
// the namespace's statistics — the scores, by the same code, of a file holding that namespace
// alone — and every query path of the lexical signal (entity walk, term selection) runs as it
// does there. The cost is the namespace's own size (≈ 4 µs a row to index), not the file's:
// reading the shared index instead costs a seek per row in every term's doclist, and doclists
// grow with every other tenant's rows. Larger namespaces are scored by namespace-bm25.ts.
import type { Db } from '../../shared/db.js';

/** Namespaces up to this many memories are ranked in their own index (≈ 8 ms to build at most). */
export const NAMESPACE_INDEX_LIMIT = 2000;
/** The temporary table's name (the lexical signal's queries name it). */
export const NAMESPACE_FTS = 'namespace_fts';

/** What the table holds: a namespace's rows as they were (the row set and their tokens). */
interface Loaded {
  namespaceId: number;
  rows: number;
  rowidSum: number;
  tokens: number;
}

/** The connection's table's content (one table per connection, shared by its namespaces' signals). */
const loaded = new WeakMap<Db, Loaded>();

export class NamespaceIndex {
  private readonly stats;
  private readonly rowSet;
  private readonly clear;
  private readonly fill;

  constructor(private readonly db: Db) {
    // The temp schema is the connection's own: writable on a read-only file. Contentless: bm25
    // needs the index and the row sizes only.
    if (!db.prepare("SELECT 1 FROM temp.sqlite_master WHERE name = ?").pluck().get(NAMESPACE_FTS)) {
      db.exec(`CREATE VIRTUAL TABLE temp.${NAMESPACE_FTS} USING fts5(content, context, content = '',
        tokenize = 'porter unicode61 remove_diacritics 2')`);
      // The shared index's own rank (its column weights, migration 6), read rather than repeated.
      const rank = db.prepare<[], string>("SELECT v FROM memories_fts_config WHERE k = 'rank'").pluck().get();
      if (rank !== undefined) db.prepare(`INSERT INTO temp.${NAMESPACE_FTS}(${NAMESPACE_FTS}, rank) VALUES ('rank', ?)`).run(rank);
    }
    this.stats = db.prepare<[number], { documents: number; tokens: number }>(
      'SELECT documents, tokens FROM namespace_text_stats WHERE namespace_id = ?');
    // Row ids are never reused (AUTOINCREMENT) and a new row's is above every existing one, so
    // the count and the sum of the ids change with any change of the row set; the token total
    // changes with a row's text (a turn's context cleared). From an index: no row is read.
    this.rowSet = db.prepare<[number], { rows: number; rowidSum: number }>(
      'SELECT count(*) AS rows, coalesce(sum(rowid), 0) AS rowidSum FROM memories WHERE namespace_id = ?');
    this.clear = db.prepare(`INSERT INTO temp.${NAMESPACE_FTS}(${NAMESPACE_FTS}) VALUES ('delete-all')`);
    this.fill = db.prepare<[number]>(`INSERT INTO temp.${NAMESPACE_FTS}(rowid, content, context)
      SELECT rowid, content, context FROM main.memories WHERE namespace_id = ?`);
  }

  /**
   * Makes the table hold the namespace's rows as they are now; false (and nothing done) when the
   * namespace is over NAMESPACE_INDEX_LIMIT.
   */
  load(namespaceId: number): boolean {
    const stats = this.stats.get(namespaceId) ?? { documents: 0, tokens: 0 };
    if (stats.documents > NAMESPACE_INDEX_LIMIT) return false;
    const { rows, rowidSum } = this.rowSet.get(namespaceId)!;
    const held = loaded.get(this.db);
    if (held !== undefined && held.namespaceId === namespaceId && held.rows === rows && held.rowidSum === rowidSum
      && held.tokens === stats.tokens) return true;
    loaded.delete(this.db); // until filled: a failure below leaves nothing taken for loaded
    this.clear.run();
    this.fill.run(namespaceId);
    loaded.set(this.db, { namespaceId, rows, rowidSum, tokens: stats.tokens });
    return true;
  }
}
