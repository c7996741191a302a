// remember: a fact about an entity (created on first use). A fact the entity already holds
// (same normalised content) raises that memory's confidence instead of adding a row — which is
// also what makes a retry after an unknown COMMIT outcome safe. A semantic fact takes its place
// on the timeline of the attribute it sets (supersession.ts).
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import { contentKey, isoWithOffset } from '../../shared/text.js';
import type { MemoryRow, Step, TimelinePages } from './rows.js';
import type { RuleContext } from './context.js';
import { entity } from './entities.js';
import { insertMemory, type NewMemory } from './new-memory.js';
import { placement, TIMELINE_PAGE, type Placement } from './supersession.js';
import { factAttribute } from '../../shared/fact-attributes.js';

export function* remember(cmd: CommandOf<'remember'>, ctx: RuleContext): Step<WriterResults['remember']> {
  return storedFact(yield* rememberRow(cmd, ctx));
}

/** remember's rule, answering the row as stored and what it superseded (remember/batch reports both). */
export function* rememberRow(cmd: CommandOf<'remember'>, ctx: RuleContext): Step<StoredRow> {
  const owner = yield* entity(ctx, cmd.entity);
  return yield* storeOwned(ctx, owner.id, {
    type: 'semantic', content: cmd.fact, confidence: cmd.confidence, tier: 1,
    ownerId: owner.id, episodeId: null, seq: null, role: null, links: [], occurredAt: cmd.validFrom,
  });
}

/** A row storeOwned wrote or found: `created` false for a duplicate; `superseded` the ids of the earlier values it replaced. */
export type StoredRow = MemoryRow & { created: boolean; superseded: string[] };

/** The answer's shape of a stored fact. */
export function storedFact(row: MemoryRow): WriterResults['remember'] {
  return {
    id: row.id, content: row.content, memory_type: row.memory_type,
    confidence: row.confidence, stability: row.stability, extraction_tier: row.extraction_tier,
    occurred_at: isoWithOffset(row.occurred_at),
    ...(row.memory_type === 'semantic' ? {
      valid_until: row.valid_until === null ? null : isoWithOffset(row.valid_until), superseded_by: row.superseded_by,
    } : {}),
  };
}

/** Stores a memory owned by an entity unless the entity already holds the same fact. */
export function* storeOwned(ctx: RuleContext, ownerId: string, memory: NewMemory): Step<StoredRow> {
  const occurredAt = memory.occurredAt ?? ctx.now();
  // A row an open delete is about to remove is no duplicate: the new fact gets a row of its own.
  const key = contentKey(memory.content);
  const aboveRowid = ctx.deletes.deletedUpTo(ownerId);
  // Where each read is a round trip, the timeline a fact setting an attribute is placed on comes
  // with the duplicate check (every path but a fact heard again reads it).
  const attribute = ctx.rows.ownedDuplicateWithTimeline && memory.type === 'semantic' ? factAttribute(memory.content)?.attribute : undefined;
  let duplicate: MemoryRow | undefined;
  let read: TimelinePages | undefined;
  if (attribute === undefined) duplicate = yield* ctx.rows.ownedDuplicate(ownerId, key, memory.type, aboveRowid);
  else ({ duplicate, timeline: read } = yield* ctx.rows.ownedDuplicateWithTimeline!(ownerId, key, memory.type, aboveRowid, attribute, occurredAt, TIMELINE_PAGE));
  // The same words after they were superseded say the value came back ("moved back to Berlin"): a new fact.
  let place = null as Placement | null;
  let sameFact = duplicate !== undefined && (duplicate.valid_until === null || occurredAt < duplicate.valid_until);
  if (duplicate && sameFact && restatedAtAnotherTime(memory, occurredAt, duplicate)) {
    // The same value of a single-valued attribute, said to hold from another moment: a point of
    // its own on the timeline, or a value stated later between the two (Berlin 2021, Berlin 2023,
    // then Madrid 2022) would supersede the only Berlin row and leave Madrid current.
    place = yield* placement(ctx.rows, ownerId, memory.content, occurredAt, read);
    if (occurredAt < duplicate.occurred_at) {
      // Earlier: it holds until the next later value, or until the stored row restates it.
      if (place.next === null || place.next.at > duplicate.occurred_at) place = { ...place, next: { at: duplicate.occurred_at, id: duplicate.id } };
    } else {
      place = { ...place, supersedes: [...place.supersedes, duplicate] };
    }
    sameFact = false;
  } else if (duplicate && sameFact && occurredAt < duplicate.occurred_at && memory.type === 'semantic') {
    // Said to be true earlier than the stored row: still the same fact only if no other value of
    // the attribute lies between the two (facts may arrive newest first, and the value may have
    // come back: Berlin 2021, Madrid 2022, Berlin 2023).
    place = yield* placement(ctx.rows, ownerId, memory.content, occurredAt, read);
    sameFact = place.next === null || place.next.at > duplicate.occurred_at;
  }
  if (duplicate && sameFact) {
    // Hearing a fact again is evidence for it: keep the stronger confidence.
    yield* ctx.rows.raiseConfidence(duplicate.rowid, memory.confidence, ctx.now());
    return { ...duplicate, confidence: Math.max(duplicate.confidence, memory.confidence), created: false, superseded: [] };
  }
  place ??= memory.type === 'semantic' ? yield* placement(ctx.rows, ownerId, memory.content, occurredAt, read) : null;
  // Objects spelled out rather than spread: this runs for every stored row, and V8 copies a
  // spread property by property through a generic path (measured a few µs a row).
  const next = place?.next ?? null;
  const stored = yield* insertMemory(ctx, {
    type: memory.type, content: memory.content, confidence: memory.confidence, tier: memory.tier,
    ownerId: memory.ownerId, episodeId: memory.episodeId, seq: memory.seq, role: memory.role, context: memory.context,
    links: [{ entityId: ownerId, relation: 'owner' }, ...memory.links], occurredAt, contentKey: key,
    validUntil: next ? next.at : memory.validUntil, supersededBy: next ? next.id : memory.supersededBy,
    // The earlier values it replaces are marked superseded with the insert (supersession.ts).
    supersedes: place !== null && place.supersedes.length > 0 ? place.supersedes : undefined,
  });
  return {
    rowid: stored.rowid, id: stored.id, memory_type: stored.memory_type, content: stored.content,
    confidence: stored.confidence, stability: stored.stability, extraction_tier: stored.extraction_tier,
    occurred_at: stored.occurred_at, valid_until: stored.valid_until, superseded_by: stored.superseded_by,
    created: true, superseded: place ? place.supersedes.map((fact) => fact.id) : [],
  };
}

/**
 * A semantic fact setting a single-valued attribute, whose caller said when it became true
 * (valid_from, an episode's date), at another moment than the stored row with the same words.
 * Without a time of its own (now), the same words again are the same fact: reinforced.
 */
function restatedAtAnotherTime(memory: NewMemory, occurredAt: number, duplicate: MemoryRow): boolean {
  return memory.type === 'semantic' && memory.occurredAt !== undefined && occurredAt !== duplicate.occurred_at
    && factAttribute(memory.content) !== null;
}
