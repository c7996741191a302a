// Lexical relevance: FTS5 with real bm25() ranking, kept cheap at scale. FTS5 scores every
// row a query matches before it can sort (it has no top-k pruning), about 1 µs a row, and
// "where does Ava live" at 1M memories matches 30k rows through "live" alone. So:
// - Each term's matches are counted (up to MATCH_BUDGET) and, rarest first, terms join the
//   MATCH while the total stays within the budget: the commonest are left out (low-IDF term
//   elimination). A row matching only a common term ranks below rows with a rarer one anyway,
//   since bm25 weighs a term by its rarity.
// - Ranking covers the MATCH_BUDGET newest matching rows: all of them (exact) unless even the
//   rarest term alone is that common; then the newest, as a memory store favours recency.
// - With an entity filter every match among the entity's memories is ranked (they are few).
import type { Db } from '../../shared/db.js';
import { ftsMatchExpression } from './query-text.js';
import { FILTER_SQL, filterParams, type Proposal, type RecallContext, type RetrievalSignal } from './signals.js';

/** Most rows one query ranks (≈ 4 ms of bm25). */
const MATCH_BUDGET = 4000;
/** Without filters, this many times the depth are ranked first, then other namespaces' rows drop out. */
const OVERFETCH = 2;

const NEWEST_MATCHES = `SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH @match ORDER BY rowid DESC LIMIT ${MATCH_BUDGET}`;

export class Bm25Signal implements RetrievalSignal {
  readonly name = 'bm25';
  private readonly matchesUpTo;
  private readonly best;
  private readonly filtered;
  private readonly ofEntity;

  constructor(db: Db, private readonly namespaceId: number, readonly weight = 1) {
    this.matchesUpTo = db.prepare<[string, number], number>(
      'SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)').pluck();
    // No entity or type filter: FTS5 ranks on its own and only the best few rows are looked
    // up in memories, not every match. `fetched` tells whether FTS5 had more to give.
    this.best = db.prepare<Record<string, unknown>, { rowid: number; fetched: number }>(`
      WITH newest AS MATERIALIZED (${NEWEST_MATCHES}),
      best AS MATERIALIZED (SELECT rowid, rank FROM newest ORDER BY rank LIMIT @fetch)
      SELECT m.rowid AS rowid, (SELECT count(*) FROM best) AS fetched FROM best CROSS JOIN memories m ON m.rowid = best.rowid
      WHERE m.namespace_id = @ns AND m.archived = 0
      ORDER BY best.rank LIMIT @depth`);
    this.filtered = db.prepare<Record<string, unknown>, { rowid: number }>(`
      WITH newest AS MATERIALIZED (${NEWEST_MATCHES})
      SELECT m.rowid AS rowid FROM newest CROSS JOIN memories m ON m.rowid = newest.rowid
      WHERE ${FILTER_SQL}
      ORDER BY newest.rank LIMIT @depth`);
    // The entity filter is stated on the FTS rowid as well: SQLite then drops other rows with
    // a Bloom filter before joining memories (2.6× faster at 100k memories).
    this.ofEntity = db.prepare<Record<string, unknown>, { rowid: number }>(`SELECT m.rowid AS rowid
      FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
      WHERE memories_fts MATCH @match AND memories_fts.rowid IN (SELECT memory_rowid FROM memory_entities
          WHERE entity_id = @entity AND relation IN ('owner', 'participant'))
        AND ${FILTER_SQL}
      ORDER BY bm25(memories_fts) LIMIT @depth`);
  }

  retrieve(ctx: RecallContext): Proposal[] {
    const match = ftsMatchExpression(this.selective(ctx.terms));
    if (match === null) return [];
    const params = { match, depth: ctx.depth, ...filterParams(this.namespaceId, ctx.filter) };
    if (ctx.filter.entityId !== null) return this.ofEntity.all(params);
    if (ctx.filter.types === null) {
      const fetch = ctx.depth * OVERFETCH;
      const hits = this.best.all({ match, depth: ctx.depth, fetch, ns: this.namespaceId });
      // Enough survivors, or nothing more to rank: the same answer the filtered query gives.
      if (hits.length === ctx.depth || (hits.length > 0 && hits[0].fetched < fetch)) return hits.map(({ rowid }) => ({ rowid }));
    }
    return this.filtered.all(params);
  }

  /** The terms that go into the MATCH: rarest first, while their matches stay within budget. */
  private selective(terms: string[]): string[] {
    if (terms.length <= 1) return terms;
    // Counting stops past the budget: at most MATCH_BUDGET doclist steps per term.
    const counted = terms
      .map((term) => ({ term, matches: this.matchesUpTo.get(ftsMatchExpression([term])!, MATCH_BUDGET + 1)! }))
      .sort((a, b) => a.matches - b.matches);
    const kept = [counted[0].term];
    let matches = counted[0].matches;
    for (const { term, matches: more } of counted.slice(1)) {
      if (matches + more > MATCH_BUDGET) break;
      kept.push(term);
      matches += more;
    }
    return kept;
  }
}
