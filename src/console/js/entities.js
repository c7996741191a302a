// Entities: the list with a name search (GET /v1/entities), and one entity's memories
// (POST /v1/inspect) — facts, procedures, and conversation turns regrouped by episode in
// conversation order — with the one change this view allows: delete, behind a confirmation.
import { api } from './api.js';
import { budgetNotice, confirmAction, cutNotice, errorBox, h, num, show, when } from './dom.js';

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
      if (call === latest) show(results, entityTable(page.entities), pager(page.total));
    } catch (error) {
      if (call !== latest) return;
      show(results, error.status === 404 && error.code === 'ROUTE_NOT_FOUND'
        ? h('p', { class: 'muted' }, 'This service has no entity listing (GET /v1/entities); open an entity by name instead.')
        : errorBox(error));
    }
  }

  function pager(total) {
    const last = Math.min(state.offset + PAGE, total);
    const move = (offset) => () => {
      state.offset = offset;
      void load();
    };
    return h('div', { class: 'pager' },
      h('span', { class: 'muted' }, total === 0 ? 'No entities match.' : `${state.offset + 1}–${last} of ${total}`),
      h('button', { type: 'button', class: 'quiet', disabled: state.offset === 0, onclick: move(Math.max(0, state.offset - PAGE)) }, 'Previous'),
      h('button', { type: 'button', class: 'quiet', disabled: last >= total, onclick: move(state.offset + PAGE) }, 'Next'));
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
      h('div', { class: 'inline' }, h('label', { for: 'inspect-limit' }, 'Most recent'), limit, deleteButton)),
    body));
  limit.addEventListener('change', () => void load());

  async function load() {
    try {
      const shown = Number(limit.value);
      const memories = await api.inspect(name, shown);
      const count = memories.semantic.length + memories.procedural.length + memories.episodic.length;
      show(body,
        budgetNotice(memories),
        !memories.truncated && count === shown ? cutNotice(`Showing the ${shown} most recent memories; there may be more (raise "Most recent").`) : null,
        memorySection('Semantic', 'semantic', memories.semantic),
        memorySection('Procedural', 'procedural', memories.procedural),
        episodeSection(memories.episodic));
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

/** What wrote an extracted memory: the offline rules (or a direct remember) or the LLM extractor. */
const TIER_LABELS = { 1: 'tier 1 (rules or direct)', 2: 'tier 2 (LLM)' };

function memorySection(title, type, memories) {
  return h('section', { class: 'memories', 'data-type': type },
    h('h3', {}, `${title} `, h('span', { class: 'count' }, `(${memories.length})`)),
    memories.length === 0 ? h('p', { class: 'muted' }, 'None.') : h('ul', { class: 'cards' }, memories.map((m) => memoryCard(m))));
}

function memoryCard(memory, lead = null) {
  return h('li', { class: 'card' },
    h('p', { class: 'content' }, lead ? h('span', { class: 'role' }, lead) : null, memory.content),
    h('p', { class: 'meta' }, `confidence ${num(memory.confidence, 2)} · stability ${num(memory.stability, 2)}`,
      memory.extraction_tier === undefined ? '' : ` · ${TIER_LABELS[memory.extraction_tier] ?? `tier ${memory.extraction_tier}`}`));
}

/** Turns regrouped by episode, each in conversation order; episodes newest first (as inspect lists). */
function episodeSection(memories) {
  const episodes = new Map();
  for (const memory of memories) {
    const key = memory.episode_id ?? '';
    if (!episodes.has(key)) episodes.set(key, []);
    episodes.get(key).push(memory);
  }
  return h('section', { class: 'memories', 'data-type': 'episodic' },
    h('h3', {}, 'Episodic ', h('span', { class: 'count' }, `(${memories.length} in ${episodes.size} episode${episodes.size === 1 ? '' : 's'})`)),
    memories.length === 0 ? h('p', { class: 'muted' }, 'None.') : [...episodes].map(([id, turns]) =>
      h('section', { class: 'episode' },
        h('h4', {}, id ? `Episode ${id.slice(0, 8)}` : 'Outside any episode', id ? h('span', { class: 'muted' }, ` · ${turns.length} turns`) : null),
        h('ol', { class: 'cards turns' }, [...turns].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0)).map((m) => memoryCard(m, m.seq === undefined ? null : `#${m.seq + 1}`))))));
}
