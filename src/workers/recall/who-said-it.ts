// Who said it. A question about a person ("what does Melanie do to relax?") is usually answered
// by what that person said, or by what was said about them — not by every turn of every
// conversation they took part in. The entity links tell these apart: every turn of an episode is
// linked to each participant ('participant'), but only a memory by or about the entity links it
// as 'owner' or 'mention' (a turn naming them, a fact about them). So a candidate that is by or
// about an entity the query names gains weight × (1 − the share of candidates that are): when
// nearly every candidate is (the question names both people of a two-person conversation) the
// link tells nothing apart and adds nothing.

/** The bonus each candidate gains (0 for those not by or about a named entity). */
export function whoSaidIt(candidates: Iterable<number>, about: ReadonlySet<number>, weight: number): Map<number, number> {
  const bonus = new Map<number, number>();
  if (weight <= 0 || about.size === 0) return bonus;
  let total = 0;
  let linked = 0;
  for (const rowid of candidates) {
    total++;
    if (about.has(rowid)) linked++;
  }
  const gain = weight * (1 - linked / total);
  if (gain <= 0) return bonus;
  for (const rowid of about) bonus.set(rowid, gain);
  return bonus;
}
