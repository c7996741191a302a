// An in-memory FTS5 table standing in for a store's lexical index, so a change to what is indexed
// (an expansion column) or to what is asked (extra query terms) can be measured on the real engine
// and the real store before any write path exists (locomo-expansion.ts, locomo-wordnet.ts). The
// table holds each turn's content and context (its previous turn's words) as memories_fts does,
// with the same tokenizer, plus a third column of expansion words; with that column empty and
// weights (1.0, 0.3, 0) its rankings are the store's own.
import Database from 'better-sqlite3';
import type { ReadPort, RecallReads, SnapshotOptions } from '../../src/workers/port/read-port.js';
import type { Proposal, RecallContext } from '../../src/workers/port/candidates.js';
import { ftsMatchExpression } from '../../src/workers/sqlite/fts-match.js';

export interface StoredTurn {
  rowid: number;
  content: string;
  context: string;
}

export class ExpansionIndex {
  private readonly db = new Database(':memory:');

  constructor(rows: StoredTurn[], expansion: (rowid: number) => string[]) {
    this.db.exec("CREATE VIRTUAL TABLE t USING fts5(content, context, expansion, tokenize = 'porter unicode61 remove_diacritics 2')");
    const insert = this.db.prepare('INSERT INTO t(rowid, content, context, expansion) VALUES (?, ?, ?, ?)');
    this.db.transaction(() => {
      for (const r of rows) insert.run(r.rowid, r.content, r.context, expansion(r.rowid).join(' '));
    })();
  }

  /**
   * The best `depth` rows for the terms by bm25 with these column weights (content, context,
   * expansion), ties by rowid as the store breaks them; `ownWordsOnly` matches the terms in the
   * content and context columns alone (an expansion-only match is then no match).
   */
  rank(terms: string[], depth: number, weights: [number, number, number], ownWordsOnly = false): Proposal[] {
    const expression = ftsMatchExpression(terms);
    if (expression === null) return [];
    const bm25 = `bm25(t, ${weights.join(', ')})`;
    const match = ownWordsOnly ? `{content context} : (${expression})` : expression;
    return (this.db.prepare(`SELECT rowid, -${bm25} AS score FROM t WHERE t MATCH ? ORDER BY ${bm25}, rowid LIMIT ?`).all(match, depth) as Proposal[])
      .map(({ rowid, score }) => ({ rowid, score }));
  }

  close(): void {
    this.db.close();
  }
}

/** The port with its lexical probe replaced; every other read is the store's. */
export function withLexical(port: ReadPort, lexical: (ctx: RecallContext) => Proposal[]): ReadPort {
  return {
    snapshot: <T>(work: (reads: RecallReads) => Promise<T>, options?: SnapshotOptions) =>
      port.snapshot((reads) => work({ ...reads, lexical: async (ctx: RecallContext) => lexical(ctx) }), options),
  } as unknown as ReadPort;
}
