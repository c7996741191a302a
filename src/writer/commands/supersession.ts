// Supersession (issue 26, docs/time.md): a semantic fact that sets a single-valued attribute of
// its owner ("Alice lives in Madrid") replaces the owner's fact with another value for that
// attribute ("Alice lives in Berlin") from the moment it became true. Nothing is deleted: the
// older fact gets valid_until = the newer one's valid_from and superseded_by = its id, so
// recall as of an earlier date still finds it. Facts arrive in any order (an import may run
// backwards), so a fact is placed on the attribute's timeline: it is superseded by the next
// later value, and it supersedes the earlier values still valid at its start. Two values from
// the same moment stay side by side: time cannot decide, and recall reports the contradiction.
import { factAttribute } from '../../shared/fact-attributes.js';
import type { MemoryRow, Step, TimelineFact, TimelinePages, WriteRows } from './rows.js';

/** Where a new fact sits on its attribute's timeline. */
export interface Placement {
  /** The next later value: it arrives superseded by it. */
  next: { at: number; id: string } | null;
  /** Earlier values still valid at its start: it supersedes them once stored. */
  supersedes: TimelineFact[];
}

const NOTHING: Placement = { next: null, supersedes: [] };
/**
 * Rows read a round. Only the new fact's neighbours are read (the next later value, the values
 * still valid at its start), never the attribute's whole history: a write's cost must not grow
 * with every earlier value (an entity with thousands of them made each fact re-read them all).
 * More rounds are needed only for same-value rows, which the rule skips.
 */
export const TIMELINE_PAGE = 16;

/**
 * `read`: the first page of each read, when the caller has it already (read with the duplicate
 * check, WriteRows.ownedDuplicateWithTimeline, at the same moment: nothing was written since).
 */
export function* placement(rows: WriteRows, ownerId: string, content: string, occurredAt: number, read?: TimelinePages): Step<Placement> {
  const set = factAttribute(content);
  if (set === null) return NOTHING;
  const differs = (fact: TimelineFact) => factAttribute(fact.content)?.value !== set.value;
  let next: Placement['next'] = null;
  let manyLater = false;
  for (let offset = 0; next === null; offset += TIMELINE_PAGE) {
    const later = offset === 0 && read ? read.after : yield* rows.factsAfter(ownerId, set.attribute, occurredAt, offset, TIMELINE_PAGE);
    if (offset === 0) manyLater = later.length === TIMELINE_PAGE;
    const found = later.find(differs);
    if (found) next = { at: found.occurred_at, id: found.id };
    else if (later.length < TIMELINE_PAGE) break;
  }
  const supersedes: TimelineFact[] = [];
  for (let offset = 0; ; offset += TIMELINE_PAGE) {
    const valid = offset === 0 && read ? read.validAt : yield* rows.factsValidAt(ownerId, set.attribute, occurredAt, offset, TIMELINE_PAGE, manyLater);
    supersedes.push(...valid.filter(differs));
    if (valid.length < TIMELINE_PAGE) break;
  }
  return { next, supersedes };
}

/** Marks the earlier values as superseded by the stored fact (remember passes them to the insert instead: MemoryInsert.supersedes). */
export function* applyPlacement(rows: WriteRows, stored: Pick<MemoryRow, 'id' | 'occurred_at'>, place: Placement): Step<void> {
  for (const fact of place.supersedes) yield* rows.supersede(fact.rowid, stored.occurred_at, stored.id);
}
