// Supersession (issue 26, docs/time.md): a semantic fact that sets a single-valued attribute of
// its owner ("Alice lives in Madrid") replaces the owner's fact with another value for that
// attribute ("Alice lives in Berlin") from the moment it became true. Nothing is deleted: the
// older fact gets valid_until = the newer one's valid_from and superseded_by = its id, so
// recall as of an earlier date still finds it. Facts arrive in any order (an import may run
// backwards), so a fact is placed on the attribute's timeline: it is superseded by the next
// later value, and it supersedes the earlier values still valid at its start. Two values from
// the same moment stay side by side: time cannot decide, and recall reports the contradiction.
import { factAttribute } from '../../shared/fact-attributes.js';
import type { MemoryRow, Step, TimelineFact, WriteRows } from './rows.js';

/** Where a new fact sits on its attribute's timeline. */
export interface Placement {
  /** The next later value: it arrives superseded by it. */
  next: { at: number; id: string } | null;
  /** Earlier values still valid at its start: it supersedes them once stored. */
  supersedes: TimelineFact[];
}

const NOTHING: Placement = { next: null, supersedes: [] };

export function* placement(rows: WriteRows, ownerId: string, content: string, occurredAt: number): Step<Placement> {
  const set = factAttribute(content);
  if (set === null) return NOTHING;
  const others = (yield* rows.factsSetting(ownerId, set.attribute))
    .filter((fact) => factAttribute(fact.content)?.value !== set.value);
  let next: Placement['next'] = null;
  const supersedes: TimelineFact[] = [];
  for (const fact of others) {
    if (fact.occurred_at > occurredAt) {
      if (next === null || fact.occurred_at < next.at) next = { at: fact.occurred_at, id: fact.id };
    } else if (fact.occurred_at < occurredAt && (fact.valid_until === null || fact.valid_until > occurredAt)) {
      supersedes.push(fact);
    }
  }
  return { next, supersedes };
}

/** Marks the earlier values as superseded by the stored fact. */
export function* applyPlacement(rows: WriteRows, stored: Pick<MemoryRow, 'id' | 'occurred_at'>, place: Placement): Step<void> {
  for (const fact of place.supersedes) yield* rows.supersede(fact.rowid, stored.occurred_at, stored.id);
}
