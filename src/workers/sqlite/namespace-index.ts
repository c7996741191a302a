// A namespace's own full-text index, for ranking in a file that holds several namespaces.
// FTS5's bm25() takes N, each term's document count and the average length from the whole
// table, so in the shared memories_fts another tenant's words would move this tenant's scores.
// The namespace's rows are copied into a temporary FTS5 table of the connection (the same
// tokenizer, the same rank): there FTS5's own bm25() sees exactly the namespace's statistics —
// the scores, by the same code, of a file holding that namespace alone — and every query path
// of the lexical signal (entity walk, term selection, the newest-matches window) runs as it
// does there, at the cost it has there. Reading the shared index instead costs a seek per row
// in every term's doclist, and doclists grow with every other tenant's rows.
//
// A copy is kept up to date incrementally: rows written since it was made are appended (row ids
// only grow: AUTOINCREMENT), and the namespace's document and token counts (namespace_text_stats,
// kept by the writer's triggers) confirm that nothing else changed; a delete or an edited text
// makes it rebuilt. Copying costs ≈ 4.5 µs a row, so the copies are bounded per connection:
// one shared slot that small namespaces take in turn (rebuilt on each switch, a few ms at most),
// and LARGE_SLOTS slots kept for the most recently ranked larger namespaces, each at most
// LARGE_NAMESPACE_LIMIT rows. A namespace beyond that is ranked by namespace-bm25.ts.
//
// The slots' state lives in a temporary table beside them, so a rolled-back read transaction
// (read-port.ts ends one so when COMMIT fails) takes the state back with the copies it describes.
import type { Db } from '../../shared/db.js';
import { docSizeTokens } from '../../shared/fts-doc-size.js';

/** Namespaces up to this many memories share one slot, rebuilt on each switch (≈ 9 ms at most). */
export const SMALL_NAMESPACE_LIMIT = 2000;
/** Larger namespaces kept copied per connection, the most recently ranked ones. */
export const LARGE_SLOTS = 2;
/**
 * The largest namespace copied (≈ 250 ms to build; a temporary file, paged like any table). A
 * delete in a copied namespace makes each thread rebuild its copy at its next recall, so the
 * bound is what one such recall may cost; larger namespaces are ranked by namespace-bm25.ts.
 */
export const LARGE_NAMESPACE_LIMIT = 50_000;

/** The slot a small namespace takes; large ones take 1..LARGE_SLOTS. */
const SMALL_SLOT = 0;
const slotTable = (slot: number) => `namespace_fts_${slot}`;

interface Held {
  slot: number;
  namespace_id: number;
  /** Rows of memories up to this row id are in the copy (every later one is newer). */
  watermark: number;
  documents: number;
  tokens: number;
}

const indexes = new WeakMap<Db, NamespaceIndexes>();

/** The connection's copies (one set per connection, shared by every namespace's lexical signal). */
export class NamespaceIndexes {
  private readonly stats;
  private readonly held;
  private readonly setHeld;
  private readonly touch;
  private readonly lastRowid;
  private readonly slots: ReturnType<typeof slotStatements>[] = [];
  private uses = 0;

  static of(db: Db): NamespaceIndexes {
    let found = indexes.get(db);
    if (found === undefined) indexes.set(db, found = new NamespaceIndexes(db));
    return found;
  }

  private constructor(private readonly db: Db) {
    // The temp schema is the connection's own: writable on a read-only file.
    db.exec(`CREATE TABLE IF NOT EXISTS temp.namespace_fts_held (slot INTEGER PRIMARY KEY, namespace_id INTEGER NOT NULL,
      watermark INTEGER NOT NULL, documents INTEGER NOT NULL, tokens INTEGER NOT NULL, used INTEGER NOT NULL)`);
    // The shared index's own rank (its column weights, migration 6), read rather than repeated.
    const rank = db.prepare<[], string>("SELECT v FROM memories_fts_config WHERE k = 'rank'").pluck().get();
    for (let slot = 0; slot <= LARGE_SLOTS; slot++) {
      const table = slotTable(slot);
      // Contentless: bm25 needs the index and the row sizes only.
      db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.${table} USING fts5(content, context, content = '',
        tokenize = 'porter unicode61 remove_diacritics 2')`);
      if (rank !== undefined) db.prepare(`INSERT INTO temp.${table}(${table}, rank) VALUES ('rank', ?)`).run(rank);
      this.slots.push(slotStatements(db, table));
    }
    this.stats = db.prepare<[number], { documents: number; tokens: number }>(
      'SELECT documents, tokens FROM namespace_text_stats WHERE namespace_id = ?');
    this.held = db.prepare<[], Held>('SELECT slot, namespace_id, watermark, documents, tokens FROM temp.namespace_fts_held ORDER BY used DESC');
    this.setHeld = db.prepare<Held & { used: number }>(`INSERT OR REPLACE INTO temp.namespace_fts_held (slot, namespace_id, watermark, documents, tokens, used)
      VALUES (@slot, @namespace_id, @watermark, @documents, @tokens, @used)`);
    this.touch = db.prepare<[number, number]>('UPDATE temp.namespace_fts_held SET used = ? WHERE slot = ?');
    this.lastRowid = db.prepare<[], number>('SELECT coalesce(max(rowid), 0) FROM main.memories').pluck();
  }

  /**
   * The temporary table holding the namespace's rows as they are now (made so if need be), or
   * null when the namespace is over LARGE_NAMESPACE_LIMIT.
   */
  tableFor(namespaceId: number): string | null {
    const stats = this.stats.get(namespaceId) ?? { documents: 0, tokens: 0 };
    if (stats.documents > LARGE_NAMESPACE_LIMIT) return null;
    const held = this.held.all();
    const used = ++this.uses;
    const current = held.find((h) => h.namespace_id === namespaceId);
    if (current !== undefined && this.caughtUp(current, stats)) {
      this.touch.run(used, current.slot);
      return slotTable(current.slot);
    }
    // A namespace that grew past the small limit leaves the shared slot (it would be rebuilt at every switch).
    const small = stats.documents <= SMALL_NAMESPACE_LIMIT;
    const slot = current !== undefined && (current.slot === SMALL_SLOT) === small ? current.slot
      : small ? SMALL_SLOT : this.leastRecentLarge(held);
    this.rebuild(slot, namespaceId, used);
    return slotTable(slot);
  }

  /** Appends the namespace's rows written since the copy was made; whether the copy then matches its counts. */
  private caughtUp(held: Held, stats: { documents: number; tokens: number }): boolean {
    const s = this.slots[held.slot]!;
    const watermark = this.lastRowid.get()!;
    let { documents, tokens } = held;
    if (watermark > held.watermark) {
      documents += s.append.run(held.namespace_id, held.watermark, watermark).changes;
      for (const sz of s.sizesAfter.iterate(held.watermark)) tokens += docSizeTokens(sz);
      this.setHeld.run({ ...held, watermark, documents, tokens, used: this.uses });
    }
    // Fewer rows, or other tokens, than the copy's: a delete or an edited text since.
    return documents === stats.documents && tokens === stats.tokens;
  }

  private leastRecentLarge(held: Held[]): number {
    const large = held.filter((h) => h.slot !== SMALL_SLOT);
    for (let slot = 1; slot <= LARGE_SLOTS; slot++) if (!large.some((h) => h.slot === slot)) return slot;
    return large[large.length - 1]!.slot; // `held` is most recently used first
  }

  private rebuild(slot: number, namespaceId: number, used: number): void {
    const s = this.slots[slot]!;
    // One savepoint: a failure part-way (temp store full) leaves the slot as it was, never an
    // emptied copy still described as another namespace's.
    this.db.transaction(() => {
      const watermark = this.lastRowid.get()!;
      s.clear.run();
      const documents = s.fill.run(namespaceId, watermark).changes;
      let tokens = 0;
      for (const sz of s.sizesAfter.iterate(0)) tokens += docSizeTokens(sz);
      this.setHeld.run({ slot, namespace_id: namespaceId, watermark, documents, tokens, used });
    })();
  }
}

function slotStatements(db: Db, table: string) {
  return {
    clear: db.prepare(`INSERT INTO temp.${table}(${table}) VALUES ('delete-all')`),
    // Bounded by the watermark read before: a row committed meanwhile is the next append's.
    fill: db.prepare<[number, number]>(`INSERT INTO temp.${table}(rowid, content, context)
      SELECT rowid, content, context FROM main.memories WHERE namespace_id = ? AND rowid <= ?`),
    // The rows written since, whatever their namespace, by row id (`+`: not by the namespace's index,
    // which would walk all of the namespace's rows).
    append: db.prepare<[number, number, number]>(`INSERT INTO temp.${table}(rowid, content, context)
      SELECT rowid, content, context FROM main.memories WHERE +namespace_id = ? AND rowid > ? AND rowid <= ?`),
    sizesAfter: db.prepare<[number], Buffer>(`SELECT sz FROM temp.${table}_docsize WHERE id > ?`).pluck(),
  };
}
