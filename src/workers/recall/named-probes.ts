// Probes restricted to a named person. A question about someone ("what activities does Melanie
// do?") is answered mostly by what that person said, but the namespace-wide probes rank every
// speaker's turns together, and in a two-person conversation the other speaker's turns take half
// of each probe's first `depth` places. So when the query names entities the store knows, the
// lexical and the dense probe run again over only the memories by or about them (owner or mention
// links: what they said or what names them, never a match on the text's speaker prefix), and
// their hits join the candidates. Each probe keeps its own `depth` places, so the other speaker's
// turns cannot crowd them out; the hits are then scored on every signal like any candidate (the
// restricted bm25 comes from the same index, so on the same scale). The stage proposes: it adds
// no term of its own to any score.
import type { RecallReads } from '../port/read-port.js';
import type { Proposal, RecallContext } from '../port/candidates.js';

export interface NamedProposals {
  lexical: Proposal[];
  nearest: Proposal[];
}

const NONE: NamedProposals = { lexical: [], nearest: [] };

/**
 * The restricted probes' hits, `share` × the recall's depth of each (0: the stage is off); the
 * lexical probe only when `lexical`, the dense one only when `dense` and the recall has a vector.
 */
export async function namedProbes(reads: RecallReads, ctx: RecallContext, share: number, { lexical, dense }: { lexical: boolean; dense: boolean }): Promise<NamedProposals> {
  const depth = Math.floor(ctx.depth * share);
  if (depth <= 0 || ctx.queryEntityIds.length === 0 || (!lexical && !dense)) return NONE;
  return reads.proposeAbout({ ...ctx, depth, terms: lexical ? ctx.terms : [], queryVector: dense ? ctx.queryVector : null }, ctx.queryEntityIds);
}
