// One memory's history (GET /v1/memories/{id}/history): the memory; the values its attribute had
// over time, oldest first (the supersession chain: each with when it held and what replaced it,
// this one marked); and its life — stored, reinforced, promoted from, decayed, archived,
// superseded, restored — with times. Read-only; every memory named links to its own history.
import { api } from './api.js';
import { memoryCard, memoryHref, relations, timeText } from './cards.js';
import { budgetNotice, errorBox, h, show, when } from './dom.js';

const EVENT_LABELS = {
  stored: 'Stored',
  reinforced: 'Reinforced (recalled)',
  promoted_from: 'Promoted from an episodic memory',
  decayed: 'Decayed',
  archived: 'Archived',
  superseded: 'Superseded',
  restored: 'Restored from a snapshot',
};

export function memoryView(root, id) {
  const body = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  root.append(h('section', { class: 'panel', 'aria-labelledby': 'memory-title' },
    h('p', {}, h('a', { href: '#entities' }, '← Entities')),
    h('h2', { id: 'memory-title' }, 'Memory history'),
    body));

  (async () => {
    try {
      const history = await api.history(id);
      const related = relations([history.memory, ...history.chain]);
      show(body,
        budgetNotice(history),
        h('ul', { class: 'cards', id: 'memory-shown' }, memoryCard(history.memory, { related, history: false })),
        chainSection(history, related),
        eventsSection(history.events, related));
    } catch (error) {
      show(body, errorBox(error));
    }
  })();
}

/** The attribute's values over time; a memory that sets no single-valued attribute is its own chain. */
function chainSection({ memory, chain }, related) {
  if (chain.length <= 1) {
    return h('section', { id: 'memory-chain' }, h('h3', {}, 'Supersession chain'),
      h('p', { class: 'muted' }, memory.memory_type === 'semantic'
        ? 'No other value of this attribute is stored: nothing superseded it, and it superseded nothing.'
        : 'Only facts are superseded; a turn or a procedure stays as it was said.'));
  }
  return h('section', { id: 'memory-chain' },
    h('h3', {}, 'Supersession chain ', h('span', { class: 'count' }, `(${chain.length} values, oldest first)`)),
    h('ol', { class: 'chain' }, chain.map((link) => h('li', {
      class: link.id === memory.id ? 'current-link' : null,
      'data-memory': link.id,
      'aria-current': link.id === memory.id ? 'true' : null,
    },
    link.id === memory.id ? h('strong', {}, link.content) : h('a', { href: memoryHref(link.id) }, link.content),
    h('span', { class: 'muted' }, ` · ${timeText(link) ?? ''}`),
    link.superseded_by
      ? h('span', { class: 'muted' }, ' · replaced by ', related.byId.has(link.superseded_by)
        ? `"${related.byId.get(link.superseded_by).content}"` : h('a', { href: memoryHref(link.superseded_by) }, link.superseded_by.slice(0, 8)))
      : h('span', { class: 'ok' }, ' · current'),
    link.id === memory.id ? h('span', { class: 'muted' }, ' (this memory)') : null))));
}

function eventsSection(events, related) {
  return h('section', { id: 'memory-events' },
    h('h3', {}, 'Life'),
    h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Event', 'When', 'Detail'].map((title) => h('th', { scope: 'col' }, title)))),
      h('tbody', {}, events.map((event) => h('tr', { 'data-event': event.event },
        h('td', {}, EVENT_LABELS[event.event] ?? event.event),
        h('td', {}, event.at === null ? h('span', { class: 'muted' }, 'not recorded') : when(event.at)),
        h('td', {},
          event.count === undefined ? null : `${event.count} time${event.count === 1 ? '' : 's'}`,
          event.memory_id === undefined ? null : h('a', { href: memoryHref(event.memory_id) },
            related.byId.has(event.memory_id) ? `"${related.byId.get(event.memory_id).content}"` : `memory ${event.memory_id.slice(0, 8)}`)))))));
}
