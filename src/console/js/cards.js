// One memory as a card, wherever the console lists memories (an entity's page, a history): its
// text, who said it, when it happened or held, and how it relates to the others — a fact a later
// one superseded is marked with a link to what replaced it, a fact that conflicts with another
// one listed is flagged with a link to it. Every link leads to a memory's history (#memory/<id>).
import { h, num, when } from './dom.js';

/** What wrote an extracted memory: the offline rules (or a direct remember) or the LLM extractor. */
const TIER_LABELS = { 1: 'tier 1 (rules or direct)', 2: 'tier 2 (LLM)' };

export const memoryHref = (id) => `#memory/${encodeURIComponent(id)}`;
const shortId = (id) => String(id).slice(0, 8);

/**
 * The memories a page lists, by id, and the conflicts among them: what a card needs to name the
 * memory a link leads to by its text rather than its id.
 */
export function relations(memories, contradictions = []) {
  const byId = new Map(memories.map((m) => [m.id, m]));
  const conflicts = new Map();
  for (const { memory_ids: ids } of contradictions) {
    if (!ids || ids.length !== 2) continue;
    for (const [one, other] of [ids, [...ids].reverse()]) conflicts.set(one, [...(conflicts.get(one) ?? []), other]);
  }
  return { byId, conflicts };
}

/** A link to a memory's history, named by its text when the page has it. */
function memoryLink(id, byId) {
  const known = byId.get(id);
  return h('a', { href: memoryHref(id) }, known ? `"${known.content}"` : `memory ${shortId(id)}`);
}

/** When it happened or held: a turn was said; a fact held from valid_from until it was superseded. */
export function timeText(memory) {
  if (memory.occurred_at === undefined) return null;
  if (memory.memory_type === 'episodic') return `said ${when(memory.occurred_at)}`;
  return memory.valid_until ? `held ${when(memory.occurred_at)} – ${when(memory.valid_until)}` : `since ${when(memory.occurred_at)}`;
}

/**
 * `lead`: text shown before the content (a turn's position). `related`: relations() of the page.
 * `history`: false on the history page itself, where the card is the memory shown.
 */
export function memoryCard(memory, { lead = null, related = relations([]), history = true } = {}) {
  const superseded = Boolean(memory.superseded_by);
  const conflicting = related.conflicts.get(memory.id) ?? [];
  const speaker = memory.role ? h('span', { class: 'speaker' }, memory.role) : null;
  return h('li', {
    class: ['card', superseded ? 'superseded' : null, conflicting.length ? 'conflict' : null].filter(Boolean).join(' '),
    'data-memory': memory.id,
  },
  h('p', { class: 'content' }, lead ? h('span', { class: 'role' }, lead) : null, speaker, speaker ? ' ' : null, memory.content),
  h('p', { class: 'meta' },
    [
      timeText(memory),
      `confidence ${num(memory.confidence, 2)}`,
      `stability ${num(memory.stability, 2)}`,
      memory.extraction_tier === undefined ? null : TIER_LABELS[memory.extraction_tier] ?? `tier ${memory.extraction_tier}`,
    ].filter(Boolean).join(' · '),
    history ? [' · ', h('a', { href: memoryHref(memory.id), class: 'history' }, 'History')] : null),
  superseded
    ? h('p', { class: 'flag superseded-note' }, h('strong', {}, 'Superseded'), ` ${when(memory.valid_until)} by `, memoryLink(memory.superseded_by, related.byId))
    : null,
  conflicting.length
    ? h('p', { class: 'flag conflict-note', role: 'note' }, h('strong', {}, 'Contradicts'), ' ',
      conflicting.map((id, i) => [i ? ', ' : null, memoryLink(id, related.byId)]),
      ' (same attribute, another value, at the same time: the service cannot tell which holds)')
    : null);
}
