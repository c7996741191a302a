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
// A copy is kept up to date incrementally, never rebuilt for a change:
// - rows written since it was made are appended (row ids only grow: AUTOINCREMENT);
// - the namespace's document and token counts (namespace_text_stats, kept by the writer's
//   triggers) say whether anything else changed. If they differ, the copy's row sizes are
//   compared with the shared index's (one pass in SQL, ≈ 0.1–0.5 µs a row): a row gone there was
//   deleted, a row of another size was edited (a turn's context cleared). Each is deleted from
//   the copy with its old text (the copy keeps its rows' text in a temporary table beside it,
//   an external-content FTS5 table: a delete must give FTS5 the text it indexed, and the shared
//   table no longer has it) and an edited row is copied again. FTS5's own delete keeps its
//   statistics exact, so the copy scores what a copy made now would.
// Copying costs ≈ 5–15 µs a row, so the copies are bounded per connection: one shared slot that
// small namespaces take in turn (a few ms at most), and LARGE_SLOTS slots kept for the most
// recently ranked larger namespaces, each at most LARGE_NAMESPACE_LIMIT rows. A namespace
// beyond that is ranked by namespace-bm25.ts. The copies live in the connection's temporary
// file (SQLite's page cache for it is bounded as any other); when a slot is filled again with
// a smaller namespace, the pages freed are given back (the temp schema is incremental-vacuum,
// shared/db.ts), so the file is at most what the slots hold.
//
// The slots' state lives in a temporary table beside them, so a rolled-back read transaction
// (read-port.ts ends one so when COMMIT fails) takes the state back with the copies it describes.
import type { Db } from '../../shared/db.js';
import { docSizeTokens } from '../../shared/fts-doc-size.js';

/** Namespaces up to this many memories share one slot, refilled on each switch (≈ 10 ms at most). */
export const SMALL_NAMESPACE_LIMIT = 2000;
/** Larger namespaces kept copied per connection, the most recently ranked ones. */
export const LARGE_SLOTS = 2;
/**
 * The largest namespace copied. Measured at 100,000 memories beside 1,000 tenants (bench:
 * tenant-lexical, busy box): the copy 1.4–1.8 s (once per pool thread, at its first recall there),
 * ≈ 200 bytes a row of temporary file; after a delete or an edit, 50 ms to find and apply it (a
 * pass over the copy's row sizes), never a rebuild — a million: ~10× that. Larger namespaces
 * beside others are ranked by namespace-bm25.ts (seconds a recall at 100,000 already).
 */
export const LARGE_NAMESPACE_LIMIT = 1_000_000;
/** Free pages of the temporary file past which a refill gives them back (1 MiB of 4 KiB pages). */
const RECLAIM_PAGES = 256;

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

interface Counts {
  documents: number;
  tokens: number;
}

const indexes = new WeakMap<Db, NamespaceIndexes>();

/** The connection's copies (one set per connection, shared by every namespace's lexical signal). */
export class NamespaceIndexes {
  private readonly stats;
  private readonly held;
  private readonly setHeld;
  private readonly lastRowid;
  private readonly freePages;
  private readonly slots: Slot[] = [];
  private uses = 0;
  /** Copies made from scratch on this connection (the first in a slot, or a namespace taking a slot): tests tell a kept copy by it. */
  copiesMade = 0;

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
    for (let slot = 0; slot <= LARGE_SLOTS; slot++) this.slots.push(new Slot(db, slotTable(slot), rank));
    this.stats = db.prepare<[number], Counts>('SELECT documents, tokens FROM namespace_text_stats WHERE namespace_id = ?');
    this.held = db.prepare<[], Held>('SELECT slot, namespace_id, watermark, documents, tokens FROM temp.namespace_fts_held ORDER BY used DESC');
    this.setHeld = db.prepare<Held & { used: number }>(`INSERT OR REPLACE INTO temp.namespace_fts_held (slot, namespace_id, watermark, documents, tokens, used)
      VALUES (@slot, @namespace_id, @watermark, @documents, @tokens, @used)`);
    this.lastRowid = db.prepare<[], number>('SELECT coalesce(max(rowid), 0) FROM main.memories').pluck();
    this.freePages = db.prepare<[], number>('PRAGMA temp.freelist_count').pluck();
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
    // A namespace that grew past the small limit leaves the shared slot (it would be refilled at every switch).
    const small = stats.documents <= SMALL_NAMESPACE_LIMIT;
    if (current !== undefined && (current.slot === SMALL_SLOT) === small && this.caughtUp(current, stats, used)) {
      return slotTable(current.slot);
    }
    const slot = current !== undefined && (current.slot === SMALL_SLOT) === small ? current.slot
      : small ? SMALL_SLOT : this.leastRecentLarge(held);
    this.refill(slot, namespaceId, used);
    return slotTable(slot);
  }

  /**
   * Brings the copy up to the namespace's rows: appends the rows written since, then, if the
   * counts still differ, applies the deletes and edits since. Whether it now matches its counts.
   */
  private caughtUp(held: Held, stats: Counts, used: number): boolean {
    const slot = this.slots[held.slot]!;
    // One savepoint, as a refill: the copy and its description change together or not at all.
    const counts = this.db.transaction(() => {
      // Never below the last one (deleting the newest row lowers max(rowid); ids are not reused).
      const watermark = Math.max(this.lastRowid.get()!, held.watermark);
      let now: Counts = { documents: held.documents, tokens: held.tokens };
      if (watermark > held.watermark) now = add(now, slot.append(held.namespace_id, held.watermark, watermark));
      if (!same(now, stats)) now = add(now, slot.reconcile());
      this.setHeld.run({ ...held, watermark, ...now, used });
      return now;
    })();
    // Still not the namespace's counts: a change the sizes do not show (the writer makes none); made afresh.
    return same(counts, stats);
  }

  private leastRecentLarge(held: Held[]): number {
    const large = held.filter((h) => h.slot !== SMALL_SLOT);
    for (let slot = 1; slot <= LARGE_SLOTS; slot++) if (!large.some((h) => h.slot === slot)) return slot;
    return large[large.length - 1]!.slot; // `held` is most recently used first
  }

  private refill(slot: number, namespaceId: number, used: number): void {
    // One savepoint: a failure part-way (temp store full) leaves the slot as it was, never an
    // emptied copy still described as another namespace's.
    this.db.transaction(() => {
      const watermark = this.lastRowid.get()!;
      const counts = this.slots[slot]!.fill(namespaceId, watermark);
      this.setHeld.run({ slot, namespace_id: namespaceId, watermark, ...counts, used });
    })();
    this.copiesMade += 1;
    // A smaller namespace took the place of a larger one: give the difference back.
    if (this.freePages.get()! > RECLAIM_PAGES) this.db.pragma('temp.incremental_vacuum');
  }
}

const add = (a: Counts, b: Counts): Counts => ({ documents: a.documents + b.documents, tokens: a.tokens + b.tokens });
const same = (a: Counts, b: Counts) => a.documents === b.documents && a.tokens === b.tokens;

/** One copy: the rows' text (temp.<table>_rows) and the FTS5 index over it (temp.<table>). */
class Slot {
  private readonly clearIndex;
  private readonly clearRows;
  private readonly copyRows;
  private readonly appendRows;
  private readonly indexAfter;
  private readonly sizesAfter;
  private readonly changed;
  private readonly unindex;
  private readonly deleteRow;
  private readonly copyRow;
  private readonly indexRow;

  constructor(private readonly db: Db, table: string, rank: string | undefined) {
    const rows = `${table}_rows`;
    db.exec(`CREATE TABLE IF NOT EXISTS temp.${rows} (rowid INTEGER PRIMARY KEY, content TEXT, context TEXT);
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.${table} USING fts5(content, context, content = '${rows}', content_rowid = 'rowid',
        tokenize = 'porter unicode61 remove_diacritics 2')`);
    if (rank !== undefined) db.prepare(`INSERT INTO temp.${table}(${table}, rank) VALUES ('rank', ?)`).run(rank);
    this.clearIndex = db.prepare(`INSERT INTO temp.${table}(${table}) VALUES ('delete-all')`);
    this.clearRows = db.prepare(`DELETE FROM temp.${rows}`);
    // Bounded by the watermark read before: a row committed meanwhile is the next append's.
    this.copyRows = db.prepare<[number, number]>(`INSERT INTO temp.${rows}(rowid, content, context)
      SELECT rowid, content, context FROM main.memories WHERE namespace_id = ? AND rowid <= ?`);
    // The rows written since, whatever their namespace, by row id (`+`: not by the namespace's index,
    // which would walk all of the namespace's rows).
    this.appendRows = db.prepare<[number, number, number]>(`INSERT INTO temp.${rows}(rowid, content, context)
      SELECT rowid, content, context FROM main.memories WHERE +namespace_id = ? AND rowid > ? AND rowid <= ?`);
    this.indexAfter = db.prepare<[number]>(`INSERT INTO temp.${table}(rowid, content, context)
      SELECT rowid, content, context FROM temp.${rows} WHERE rowid > ?`);
    this.sizesAfter = db.prepare<[number], Buffer>(`SELECT sz FROM temp.${table}_docsize WHERE id > ?`).pluck();
    // Every row of the copy whose size in the shared index differs: gone there (deleted) or edited.
    this.changed = db.prepare<[], { rowid: number; was: Buffer; now: Buffer | null }>(`SELECT c.id AS rowid, c.sz AS was, d.sz AS now
      FROM temp.${table}_docsize c LEFT JOIN main.memories_fts_docsize d ON d.id = c.id WHERE d.sz IS NOT c.sz`);
    this.unindex = db.prepare<[number]>(`INSERT INTO temp.${table}(${table}, rowid, content, context)
      SELECT 'delete', rowid, content, context FROM temp.${rows} WHERE rowid = ?`);
    this.deleteRow = db.prepare<[number]>(`DELETE FROM temp.${rows} WHERE rowid = ?`);
    this.copyRow = db.prepare<[number]>(`INSERT INTO temp.${rows}(rowid, content, context) SELECT rowid, content, context FROM main.memories WHERE rowid = ?`);
    this.indexRow = db.prepare<[number]>(`INSERT INTO temp.${table}(rowid, content, context) SELECT rowid, content, context FROM temp.${rows} WHERE rowid = ?`);
  }

  /** Empties the slot and copies the namespace's rows up to `watermark` into it. */
  fill(namespaceId: number, watermark: number): Counts {
    this.clearIndex.run();
    this.clearRows.run();
    const documents = this.copyRows.run(namespaceId, watermark).changes;
    this.indexAfter.run(0);
    return { documents, tokens: this.tokensAfter(0) };
  }

  /** Copies the namespace's rows written after `from`, up to `to`; what they add to the counts. */
  append(namespaceId: number, from: number, to: number): Counts {
    const documents = this.appendRows.run(namespaceId, from, to).changes;
    if (documents === 0) return { documents: 0, tokens: 0 };
    this.indexAfter.run(from);
    return { documents, tokens: this.tokensAfter(from) };
  }

  /** Applies the deletes and edits since the rows were copied; what they take from (or add to) the counts. */
  reconcile(): Counts {
    let documents = 0;
    let tokens = 0;
    // Read whole before the copy changes under the statement.
    for (const { rowid, was, now } of this.changed.all()) {
      this.unindex.run(rowid);
      this.deleteRow.run(rowid);
      documents -= 1;
      tokens -= docSizeTokens(was);
      if (now === null) continue;
      this.copyRow.run(rowid);
      this.indexRow.run(rowid);
      documents += 1;
      tokens += docSizeTokens(now);
    }
    return { documents, tokens };
  }

  private tokensAfter(rowid: number): number {
    let tokens = 0;
    for (const sz of this.sizesAfter.iterate(rowid)) tokens += docSizeTokens(sz);
    return tokens;
  }
}
