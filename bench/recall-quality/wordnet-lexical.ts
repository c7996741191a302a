// The lexical probe with WordNet expansion (issue 29, eighth step), on an in-memory copy of a
// store's lexical index (expanded-lexical.ts), for locomo-wordnet.ts and synthetic-tune.ts:
// - document side (`up=L`): each turn's expansion column holds the words its nouns and verbs
//   reach through at most L hypernym links ("pottery" → "ceramics", "craft", "art"), ranked
//   bm25(1.0, 0.3, x);
// - query side (`down=L`): the query's words' hyponyms within L links ("activities" → "camping",
//   "hobby", …) asked in a second match over the turns' own words, its bm25 added at `qx`;
//   `join=0`: a turn only the hyponyms match does not join the proposals, the hyponyms only
//   re-score the query's own matches.
// `all=1`: every sense of a word, not only its first (most frequent) one.
import type { Proposal, RecallContext } from '../../src/workers/port/candidates.js';
import { isStopword, tokenize } from '../../src/workers/recall/query-text.js';
import { ExpansionIndex, type StoredTurn } from './expanded-lexical.js';
import { hypernymWords, hyponymWords, type Senses, type WordNet } from './wordnet.js';

export interface WordnetSetting {
  /** Hypernym levels indexed per turn (0: no document expansion). */
  up: number;
  /** Hyponym levels added to the query (0: no query expansion). */
  down: number;
  senses: Senses;
  /** bm25 weight of the expansion column. */
  x: number;
  /** Weight of the hyponym match's bm25, added to the query's own. */
  qx: number;
  /** Whether a turn only the hyponyms match joins the proposals (false: they only re-score the query's own matches). */
  join: boolean;
}

const KEYS = ['up', 'down', 'all', 'x', 'qx', 'join'] as const;

/** Splits a setting's name=value pairs into the WordNet part (null when it has none) and the rest. */
export function wordnetSetting(kv: Record<string, number>): { wordnet: WordnetSetting | null; rest: Record<string, number> } {
  const rest = Object.fromEntries(Object.entries(kv).filter(([k]) => !(KEYS as readonly string[]).includes(k)));
  if (!KEYS.some((k) => k in kv)) return { wordnet: null, rest };
  const { up = 0, down = 0, all = 0, x = 0.3, qx = 0.3, join = 1 } = kv;
  return { wordnet: { up, down, senses: all === 1 ? 'all' : 'first', x, qx, join: join !== 0 }, rest };
}

const keep = (word: string) => !isStopword(word);

export interface WordnetLexical {
  lexical(ctx: RecallContext): Proposal[];
  /** The expansion words indexed for a turn (empty without document expansion). */
  expansionOf(rowid: number): string[];
  /** The hyponym words a query's terms add (empty without query expansion). */
  hyponymsOf(terms: string[]): string[];
  close(): void;
}

export function wordnetLexical(wn: WordNet, rows: StoredTurn[], setting: WordnetSetting): WordnetLexical {
  const expansion = new Map(rows.map((r) => [r.rowid, setting.up > 0 ? hypernymWords(wn, tokenize(r.content), setting.up, setting.senses, keep) : []]));
  const index = new ExpansionIndex(rows, (rowid) => expansion.get(rowid) ?? []);
  const below = new Map<string, string[]>();
  const hyponymsOf = (terms: string[]) => {
    if (setting.down === 0) return [];
    const words = new Set<string>();
    for (const term of terms) {
      let mine = below.get(term);
      if (mine === undefined) below.set(term, (mine = hyponymWords(wn, [term], setting.down, setting.senses, keep)));
      for (const w of mine) if (!terms.includes(w)) words.add(w);
    }
    return [...words];
  };
  return {
    lexical(ctx) {
      const own = index.rank(ctx.terms, ctx.depth, [1.0, 0.3, setting.x]);
      const extra = hyponymsOf(ctx.terms);
      if (extra.length === 0 || setting.qx === 0) return own;
      const merged = new Map(own.map((p) => [p.rowid, p.score]));
      for (const p of index.rank(extra, ctx.depth, [1.0, 0.3, 0], true)) {
        if (setting.join || merged.has(p.rowid)) merged.set(p.rowid, (merged.get(p.rowid) ?? 0) + setting.qx * p.score);
      }
      return [...merged].map(([rowid, score]) => ({ rowid, score })).sort((a, b) => b.score - a.score || a.rowid - b.rowid).slice(0, ctx.depth);
    },
    expansionOf: (rowid) => expansion.get(rowid) ?? [],
    hyponymsOf,
    close: () => index.close(),
  };
}
