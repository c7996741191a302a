// Lexical relevance: FTS5 with real bm25() ranking (the table's rank: a turn's own words, and
// its previous turn's at a lower weight — see migration 6), kept cheap at scale. FTS5's bm25
// takes its statistics from the whole table, so which index ranks depends on the file:
// - a file holding one namespace (the usual case): the shared index, memories_fts;
// - beside other namespaces, a namespace of up to LARGE_NAMESPACE_LIMIT memories: its own copy
//   in a temporary FTS5 table of the connection (namespace-index.ts), the same queries, the
//   same scores;
// - beside others, a larger namespace: namespace-bm25.ts, the formula from its own figures.
// In an index, FTS5 scores every row a query matches before it can sort (it has no top-k
// pruning), about 1 µs a row, and "where does Ava live" at 1M memories matches 30k rows through
// "live" alone. So:
// - Each term's matches are counted (up to MATCH_BUDGET) and, rarest first, terms join the
//   MATCH while the total stays within the budget: the commonest are left out (low-IDF term
//   elimination). A row matching only a common term ranks below rows with a rarer one anyway,
//   since bm25 weighs a term by its rarity; if the rarer terms bring fewer than `depth` rows,
//   rows of the common ones fill the rest.
// - Ranking covers the MATCH_BUDGET newest matching rows: all of them (exact) unless even the
//   rarest term alone is that common; then the newest, as a memory store favours recency.
// - With an entity filter the query walks the entity's memories and ranks every match; an
//   entity with more than LARGE_ENTITY memories (a one-user store's user) is a filter on the
//   path above instead.
import type { Db } from '../../shared/db.js';
import { statementPerLimits } from '../../shared/literal-statements.js';
import { ftsMatchExpression } from './fts-match.js';
import { MATCH_BUDGET, selectTerms } from '../port/term-selection.js';
import { LARGE_ENTITY, type Proposal, type RecallContext } from '../port/candidates.js';
import { entitySize, FILTER_SQL, filterParams, TIME_FILTER_SQL, type RetrievalSignal } from './filter.js';
import { NamespaceBm25 } from './namespace-bm25.js';
import { NamespaceIndexes } from './namespace-index.js';

/** Without filters, this many times the depth are ranked first, then other namespaces' rows drop out. */
const OVERFETCH = 2;

// Equal scores are common (templated texts): every query breaks ties by rowid, oldest first,
// as FTS5's own ORDER BY rank does, so the window never reorders what plain FTS5 would return.
const newestMatches = (fts: string) => `SELECT rowid, rank FROM ${fts} WHERE ${fts} MATCH @match ORDER BY rowid DESC LIMIT ${MATCH_BUDGET}`;

export class Bm25Signal implements RetrievalSignal {
  readonly name = 'bm25';
  private readonly inFile;
  private readonly copies;
  /** The rankings in the connection's copies (namespace-index.ts), by table: a few at most. */
  private readonly inCopy = new Map<string, FtsRanking>();
  private readonly ownStatistics;

  constructor(private readonly db: Db, private readonly namespaceId: number) {
    this.inFile = new FtsRanking(db, 'memories_fts', namespaceId);
    this.copies = NamespaceIndexes.of(db);
    this.ownStatistics = new NamespaceBm25(db, namespaceId);
  }

  retrieve(ctx: RecallContext): Proposal[] {
    if (ftsMatchExpression(ctx.terms) === null) return [];
    // Another namespace in the index: FTS5's ranks would count its rows (a namespace row alone,
    // e.g. from an empty import, has none).
    if (!this.ownStatistics.shared()) return this.inFile.retrieve(ctx);
    let table: string | null;
    try {
      table = this.copies.tableFor(this.namespaceId);
    } catch {
      // The copy could not be made (temporary storage full…): slower, same scores.
      table = null;
    }
    if (table === null) return this.ownStatistics.retrieve(ctx.terms, ctx);
    let ranking = this.inCopy.get(table);
    if (ranking === undefined) this.inCopy.set(table, ranking = new FtsRanking(this.db, table, this.namespaceId));
    return ranking.retrieve(ctx);
  }
}

/** Ranking by FTS5's bm25 in one index (`fts`) whose statistics are the namespace's. */
class FtsRanking {
  private readonly entitySize;
  private readonly matchesUpTo;
  private readonly best;
  private readonly filtered;
  private readonly ofEntity;

  constructor(db: Db, fts: string, private readonly namespaceId: number) {
    this.entitySize = entitySize(db);
    // Row counts are spelled into the SQL (shared/literal-statements.ts): bound, they made
    // SQLite prepare these statements again on every run.
    this.matchesUpTo = statementPerLimits<[string], number>(db,
      (limit) => `SELECT count(*) FROM (SELECT 1 FROM ${fts} WHERE ${fts} MATCH ? LIMIT ${limit})`, { pluck: true });
    // No entity or type filter: FTS5 ranks on its own and only the best few rows are looked
    // up in memories, not every match. `fetched` tells whether FTS5 had more to give.
    this.best = statementPerLimits<Record<string, unknown>, Proposal & { fetched: number }>(db, (fetch, depth) => `
      WITH newest AS MATERIALIZED (${newestMatches(fts)}),
      best AS MATERIALIZED (SELECT rowid, rank FROM newest ORDER BY rank, rowid LIMIT ${fetch})
      SELECT m.rowid AS rowid, -best.rank AS score, (SELECT count(*) FROM best) AS fetched FROM best CROSS JOIN memories m ON m.rowid = best.rowid
      WHERE m.namespace_id = @ns AND m.archived = 0 AND ${TIME_FILTER_SQL}
      ORDER BY best.rank, best.rowid LIMIT ${depth}`);
    this.filtered = statementPerLimits<Record<string, unknown>, Proposal>(db, (depth) => `
      WITH newest AS MATERIALIZED (${newestMatches(fts)})
      SELECT m.rowid AS rowid, -newest.rank AS score FROM newest CROSS JOIN memories m ON m.rowid = newest.rowid
      WHERE ${FILTER_SQL}
      ORDER BY newest.rank, newest.rowid LIMIT ${depth}`);
    // From the entity's links (one per memory: the key is memory × entity), each checked
    // against the MATCH by rowid (FTS5 seeks to it).
    this.ofEntity = statementPerLimits<Record<string, unknown>, Proposal>(db, (depth) => `SELECT m.rowid AS rowid, -${fts}.rank AS score
      FROM memory_entities e
      CROSS JOIN ${fts} ON ${fts}.rowid = e.memory_rowid
      CROSS JOIN memories m ON m.rowid = e.memory_rowid
      WHERE e.entity_id = @entity AND e.relation IN ('owner', 'participant') AND ${fts} MATCH @match
        AND ${FILTER_SQL}
      ORDER BY ${fts}.rank, m.rowid LIMIT ${depth}`);
  }

  retrieve(ctx: RecallContext): Proposal[] {
    const all = ftsMatchExpression(ctx.terms)!;
    const filter = filterParams(this.namespaceId, ctx.filter);
    if (ctx.filter.entityId !== null && this.entitySize(ctx.filter.entityId) <= LARGE_ENTITY) {
      return this.ofEntity(ctx.depth).all({ match: all, ...filter });
    }
    const { kept, left } = this.selective(ctx.terms);
    const hits = this.ranked(ftsMatchExpression(kept)!, ctx, ctx.depth);
    if (hits.length >= ctx.depth || left.length === 0) return hits;
    // The rarer terms ran out: fill up with the newest best rows of the common ones.
    const seen = new Set(hits.map((hit) => hit.rowid));
    const more = this.ranked(ftsMatchExpression(left)!, ctx, ctx.depth + hits.length).filter((hit) => !seen.has(hit.rowid));
    return [...hits, ...more].slice(0, ctx.depth);
  }

  private ranked(match: string, ctx: RecallContext, depth: number): Proposal[] {
    if (ctx.filter.types === null && ctx.filter.entityId === null) {
      const fetch = depth * OVERFETCH;
      const hits = this.best(fetch, depth).all({ match, ...filterParams(this.namespaceId, ctx.filter) });
      // Enough survivors, or nothing more to rank: the same answer the filtered query gives.
      if (hits.length === depth || (hits.length > 0 && hits[0].fetched < fetch)) return hits.map(({ rowid, score }) => ({ rowid, score }));
    }
    return this.filtered(depth).all({ match, ...filterParams(this.namespaceId, ctx.filter) });
  }

  /** The MATCH's terms by selectTerms (term-selection.ts), from each term's match count. */
  private selective(terms: string[]): { kept: string[]; left: string[] } {
    if (terms.length <= 1) return { kept: terms, left: [] };
    // Counting stops past the budget: at most MATCH_BUDGET doclist steps per term.
    return selectTerms(terms, terms.map((term) => ({ term, matches: this.matchesUpTo(MATCH_BUDGET + 1).get(ftsMatchExpression([term])!)! })));
  }
}
