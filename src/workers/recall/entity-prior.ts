// Entity links as a small prior, never as a ranked list of their own. A memory linked to an
// entity the query names (as owner, participant or mention) gains weight × (1 − the share of
// candidates linked to one of them): an entity that only a few candidates name tells them
// apart; one named by every candidate (both speakers of a two-person conversation are linked
// to every turn) adds nothing at all. The old graph list ordered an entity's memories by last
// access — every memory of a talkative speaker, most recently recalled first — which flooded
// the ranks and made results depend on which questions were asked before.
// An entity with few memories (at most the candidate depth) brings all of them in as
// candidates, unranked: "tell me about Zoltan" finds Zoltan's memories even when they share no
// word with the query; a talkative entity brings none (it would only be noise).

/** The prior each candidate gains (0 for unlinked ones). */
export function entityPrior(candidates: number[], linked: Set<number>, weight: number): (rowid: number) => number {
  const linkedCandidates = candidates.filter((rowid) => linked.has(rowid)).length;
  const bonus = candidates.length === 0 ? 0 : weight * (1 - linkedCandidates / candidates.length);
  return (rowid) => (linked.has(rowid) ? bonus : 0);
}
