// Episodes (GET /v1/episodes): the namespace's conversations, newest started first — who took
// part, when it took place and ended, how it went and how many of its messages are stored — or
// only those one entity took part in (#episodes/<name>). Read-only.
import { api } from './api.js';
import { errorBox, h, pager, show, when } from './dom.js';

const PAGE = 25;
export const episodesHref = (entity = '') => (entity ? `#episodes/${encodeURIComponent(entity)}` : '#episodes');
const entityHref = (name) => `#entity/${encodeURIComponent(name)}`;

export function episodesView(root, entity = '') {
  const state = { offset: 0 };
  const results = h('div', { id: 'episode-results', 'aria-live': 'polite' });
  const filter = h('input', { id: 'episode-entity', name: 'entity', autocomplete: 'off', placeholder: 'any', value: entity });

  // Only the latest load may draw: an older answer arriving late must not replace it.
  let latest = 0;
  async function load() {
    const call = ++latest;
    show(results, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const page = await api.episodes({ entity, limit: PAGE, offset: state.offset });
      if (call === latest) show(results, episodeTable(page.episodes), pagerOf(page.total));
    } catch (error) {
      if (call !== latest) return;
      show(results, error.status === 404 && error.code === 'ROUTE_NOT_FOUND'
        ? h('p', { class: 'muted' }, 'This service has no episode listing (GET /v1/episodes).')
        : errorBox(error));
    }
  }

  function pagerOf(total) {
    return pager({ offset: state.offset, page: PAGE, total, empty: 'No episodes.', move: (offset) => {
      state.offset = offset;
      void load();
    } });
  }

  root.append(h('section', { class: 'panel', 'aria-labelledby': 'episodes-title' },
    h('h2', { id: 'episodes-title' }, entity ? `Episodes of ${entity}` : 'Episodes'),
    // The filter is the URL's: back and links keep it.
    h('form', { class: 'inline', role: 'search', onsubmit: (e) => { e.preventDefault(); location.hash = episodesHref(filter.value.trim()); } },
      h('label', { for: 'episode-entity' }, 'Participant'), filter, h('button', { type: 'submit' }, 'Show'),
      entity ? h('a', { href: episodesHref() }, 'All episodes') : null),
    results));
  void load();
}

function episodeTable(episodes) {
  if (episodes.length === 0) return null;
  return h('table', { class: 'list' },
    h('thead', {}, h('tr', {}, ['Took place', 'Participants', 'Messages', 'Outcome', 'Ended', 'Episode'].map((title, i) =>
      h('th', { scope: 'col', class: i === 2 ? 'n' : null }, title)))),
    h('tbody', {}, episodes.map((episode) => h('tr', { 'data-episode': episode.episode_id },
      h('td', {}, when(episode.started_at)),
      h('td', {}, episode.participants.map((name, i) => [i ? ', ' : null, h('a', { href: entityHref(name) }, name)])),
      h('td', { class: 'n' }, String(episode.message_count)),
      h('td', {}, episode.outcome ? h('span', { class: `outcome ${episode.outcome}` }, episode.outcome) : h('span', { class: 'muted' }, '—')),
      h('td', {}, episode.ended_at ? when(episode.ended_at) : h('span', { class: 'muted' }, 'not ended')),
      h('td', {}, h('code', {}, episode.episode_id.slice(0, 8)))))));
}
