// Entities: the list with a name search (GET /v1/entities), and one entity's memories
// (POST /v1/inspect, superseded facts included) — facts with their times, each superseded one
// marked with what replaced it and conflicting ones flagged; procedures; conversation turns
// regrouped by episode in conversation order, with who said each — with the one change this
// view allows: delete, behind a confirmation.
import { api } from './api.js';
import { memoryCard, relations } from './cards.js';
import { budgetNotice, confirmAction, cutNotice, errorBox, h, pager, show, when } from './dom.js';
import { episodesHref } from './episodes.js';

const PAGE = 25;
const entityHref = (name) => `#entity/${encodeURIComponent(name)}`;

export function entitiesView(root) {
  const state = { q: '', offset: 0 };
  const results = h('div', { id: 'entity-results', 'aria-live': 'polite' });
  const search = h('input', { id: 'entity-search', type: 'search', name: 'q', placeholder: 'part of a name', autocomplete: 'off' });
  const open = h('input', { id: 'entity-open', name: 'name', required: true, autocomplete: 'off' });

  // Only the latest search may draw: an older answer arriving late must not replace it.
  let latest = 0;
  async function load() {
    const call = ++latest;
    show(results, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const page = await api.entities({ q: state.q, limit: PAGE, offset: state.offset });
      if (call === latest) show(results, entityTable(page.entities), pagerOf(page.total));
    } catch (error) {
      if (call !== latest) return;
      show(results, error.status === 404 && error.code === 'ROUTE_NOT_FOUND'
        ? h('p', { class: 'muted' }, 'This service has no entity listing (GET /v1/entities); open an entity by name instead.')
        : errorBox(error));
    }
  }

  function pagerOf(total) {
    return pager({ offset: state.offset, page: PAGE, total, empty: 'No entities match.', move: (offset) => {
      state.offset = offset;
      void load();
    } });
  }

  let typing;
  root.append(
    h('section', { class: 'panel', 'aria-labelledby': 'entities-title' },
      h('h2', { id: 'entities-title' }, 'Entities'),
      h('div', { class: 'row' },
        h('form', { class: 'inline', role: 'search', onsubmit: (e) => { e.preventDefault(); state.q = search.value; state.offset = 0; void load(); } },
          h('label', { for: 'entity-search' }, 'Search entities'), search, h('button', { type: 'submit' }, 'Search')),
        h('form', { class: 'inline', onsubmit: (e) => { e.preventDefault(); location.hash = entityHref(open.value); } },
          h('label', { for: 'entity-open' }, 'Open by name'), open, h('button', { type: 'submit', class: 'quiet' }, 'Open'))),
      results));
  // Searching as one types, a moment after the last key (no request per keystroke).
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.q = search.value; state.offset = 0; void load(); }, 250);
  });
  void load();
  return () => clearTimeout(typing);
}

function entityTable(entities) {
  if (entities.length === 0) return null;
  return h('table', { class: 'list' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Kind'), h('th', { scope: 'col', class: 'n' }, 'Memories'), h('th', { scope: 'col' }, 'Created'))),
    h('tbody', {}, entities.map((entity) => h('tr', {},
      h('td', {}, h('a', { href: entityHref(entity.name) }, entity.name)),
      h('td', {}, entity.kind),
      h('td', { class: 'n' }, String(entity.memory_count)),
      h('td', {}, when(entity.created_at))))));
}

export function entityView(root, name) {
  const body = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  const limit = h('select', { id: 'inspect-limit' }, [50, 200, 1000].map((n) => h('option', { value: n }, String(n))));
  const deleteButton = h('button', { type: 'button', class: 'danger', onclick: () => void remove() }, 'Delete entity…');
  root.append(h('section', { class: 'panel', 'aria-labelledby': 'entity-title' },
    h('p', {}, h('a', { href: '#entities' }, '← Entities')),
    h('div', { class: 'row spread' },
      h('h2', { id: 'entity-title' }, name),
      h('div', { class: 'inline' }, h('a', { href: episodesHref(name) }, 'Episodes'), h('label', { for: 'inspect-limit' }, 'Most recent'), limit, deleteButton)),
    body));
  limit.addEventListener('change', () => void load());

  async function load() {
    try {
      const shown = Number(limit.value);
      const memories = await api.inspect(name, shown);
      const count = memories.semantic.length + memories.procedural.length + memories.episodic.length;
      const related = relations([...memories.semantic, ...memories.procedural, ...memories.episodic], memories.contradictions);
      show(body,
        budgetNotice(memories),
        !memories.truncated && count === shown ? cutNotice(`Showing the ${shown} most recent memories; there may be more (raise "Most recent").`) : null,
        memorySection('Semantic', 'semantic', memories.semantic, related),
        memorySection('Procedural', 'procedural', memories.procedural, related),
        episodeSection(memories.episodic, related));
    } catch (error) {
      show(body, errorBox(error));
    }
  }

  async function remove() {
    const sure = await confirmAction({
      title: `Delete ${name}?`,
      message: `Every memory of "${name}" is removed, after a snapshot is written. It can be restored from Snapshots.`,
      confirmLabel: 'Delete',
    });
    if (!sure) return;
    deleteButton.disabled = true;
    try {
      const result = await api.deleteEntity(name);
      show(body, h('p', { class: 'ok', role: 'status' },
        `Deleted ${result.forgotten_count} memories.`, result.snapshot ? ` Snapshot ${result.snapshot.snapshot_id} holds them: ` : ' ',
        h('a', { href: '#snapshots' }, 'restore from Snapshots')));
    } catch (error) {
      deleteButton.disabled = false;
      show(body, errorBox(error));
    }
  }

  void load();
}

function memorySection(title, type, memories, related) {
  const superseded = memories.filter((m) => m.superseded_by).length;
  const conflicting = memories.filter((m) => related.conflicts.has(m.id)).length;
  const notes = [superseded ? `${superseded} superseded` : null, conflicting ? `${conflicting} in conflict` : null].filter(Boolean);
  return h('section', { class: 'memories', 'data-type': type },
    h('h3', {}, `${title} `, h('span', { class: 'count' }, `(${memories.length}${notes.length ? `; ${notes.join(', ')}` : ''})`)),
    memories.length === 0 ? h('p', { class: 'muted' }, 'None.') : h('ul', { class: 'cards' }, memories.map((m) => memoryCard(m, { related }))));
}

/** Turns regrouped by episode, each in conversation order; episodes newest first (as inspect lists). */
function episodeSection(memories, related) {
  const episodes = new Map();
  for (const memory of memories) {
    const key = memory.episode_id ?? '';
    if (!episodes.has(key)) episodes.set(key, []);
    episodes.get(key).push(memory);
  }
  return h('section', { class: 'memories', 'data-type': 'episodic' },
    h('h3', {}, 'Episodic ', h('span', { class: 'count' }, `(${memories.length} in ${episodes.size} episode${episodes.size === 1 ? '' : 's'})`)),
    memories.length === 0 ? h('p', { class: 'muted' }, 'None.') : [...episodes].map(([id, turns]) => {
      const ordered = [...turns].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
      return h('section', { class: 'episode', 'data-episode': id || null },
        h('h4', {}, id ? `Episode ${id.slice(0, 8)}` : 'Outside any episode',
          id ? h('span', { class: 'muted' }, ` · ${turns.length} turns · from ${when(ordered[0].occurred_at)}`) : null),
        h('ol', { class: 'cards turns' }, ordered.map((m) => memoryCard(m, { lead: m.seq === undefined ? null : `#${m.seq + 1}`, related }))));
    }));
}
