// Lexical candidates on PostgreSQL: the generated `search` tsvector (content weight A, the
// previous turn's words weight D) under GIN, with the same term selection as the SQLite path
// (term-selection.ts): each term's matches are counted up to the budget and, rarest first,
// terms join the query while the total stays within it, so ranking never walks a 30k-row OR
// match. ts_rank_cd alone knows no term rarity, so each term's ts_rank_cd (weights {D:0.3,
// A:1}, the BM25F-style weighting of SQLite's migration 6; normalised by log length) is
// multiplied by the term's BM25 idf, from the counts already taken: a rank-ordered list with a
// raw, higher-is-better score, as fusion expects from bm25 (it divides by the best).
import { TEXT_SEARCH_CONFIG } from '../../shared/postgres-schema.js';
import type { Proposal, RecallContext } from '../port/candidates.js';
import { MATCH_BUDGET, selectTerms } from '../port/term-selection.js';
import type { Tx } from './client.js';
import { candidateFilter, isSmallEntity } from './filter.js';

/** The tsvector weights {D, C, B, A}: the previous turn's words count 0.3 of the turn's own. */
const WEIGHTS = '{0.3,0,0,1}';
/** ts_rank_cd normalisation 1: divided by 1 + log(document length). */
const LENGTH_NORMALISATION = 1;

interface Term {
  term: string;
  matches: number;
  idf: number;
}

export async function lexicalCandidates(tx: Tx, namespaceId: number, ctx: RecallContext): Promise<Proposal[]> {
  if (ctx.terms.length === 0) return [];
  // An entity with few memories: every match among them is ranked, with every term (as SQLite).
  if (ctx.filter.entityId !== null && (await isSmallEntity(tx, ctx.filter.entityId))) {
    return ranked(tx, namespaceId, ctx, ctx.terms.map((term) => ({ term, matches: 1, idf: 1 })), ctx.depth);
  }
  const counted = await countTerms(tx, namespaceId, ctx.terms);
  const { kept, left } = selectTerms(ctx.terms, counted);
  const byTerm = new Map(counted.map((t) => [t.term, t]));
  const termsOf = (names: string[]) => names.map((name) => byTerm.get(name) ?? { term: name, matches: 1, idf: 1 });
  const hits = await ranked(tx, namespaceId, ctx, termsOf(kept), ctx.depth);
  if (hits.length >= ctx.depth || left.length === 0) return hits;
  // The rarer terms ran out: fill up with the best rows of the common ones.
  const seen = new Set(hits.map((hit) => hit.rowid));
  const more = (await ranked(tx, namespaceId, ctx, termsOf(left), ctx.depth + hits.length)).filter((hit) => !seen.has(hit.rowid));
  return [...hits, ...more].slice(0, ctx.depth);
}

/**
 * Each term's matches in the namespace (up to the budget + 1) and its BM25 idf, in one round trip.
 * N is the namespace's own row count (namespace_text_stats: counted by the writer's flushes, by triggers for other sessions): another
 * namespace's rows must not change this one's scores.
 */
export async function countTerms(tx: Tx, namespaceId: number, terms: string[]): Promise<Term[]> {
  const rows = await tx<{ term: string; matches: number; total: number }[]>`
    SELECT t.term, (SELECT count(*) FROM (SELECT 1 FROM memories m
        WHERE m.search @@ plainto_tsquery(${TEXT_SEARCH_CONFIG}::regconfig, t.term) AND m.namespace_id = ${namespaceId} LIMIT ${MATCH_BUDGET + 1}) x) AS matches,
      coalesce((SELECT documents FROM namespace_text_stats WHERE namespace_id = ${namespaceId}), 0) AS total
    FROM unnest(${terms}::text[]) AS t(term)`;
  return rows.map(({ term, matches, total }) => ({
    term, matches, idf: Math.log(1 + (Math.max(total, matches) - matches + 0.5) / (matches + 0.5)),
  }));
}

/** The best `depth` of the newest MATCH_BUDGET rows matching any of the terms, ties oldest first (as FTS5). */
function ranked(tx: Tx, namespaceId: number, ctx: RecallContext, terms: Term[], depth: number): Promise<Proposal[]> {
  return tx<Proposal[]>`
    WITH q AS (SELECT plainto_tsquery(${TEXT_SEARCH_CONFIG}::regconfig, u.term) AS tq, u.idf FROM unnest(${terms.map((t) => t.term)}::text[], ${terms.map((t) => t.idf)}::float8[]) AS u(term, idf)),
    matches AS MATERIALIZED (
      SELECT m.rowid, m.search FROM memories m
      WHERE m.search @@ (SELECT string_agg('(' || tq::text || ')', ' | ')::tsquery FROM q WHERE tq::text <> '')
        AND ${candidateFilter(tx, namespaceId, ctx.filter)}
      ORDER BY m.rowid DESC LIMIT ${MATCH_BUDGET})
    SELECT rowid, (SELECT sum(q.idf * ts_rank_cd(${WEIGHTS}::float4[], matches.search, q.tq, ${LENGTH_NORMALISATION})) FROM q) AS score
    FROM matches ORDER BY score DESC, rowid LIMIT ${depth}`;
}
