// The recall playground: POST /v1/recall with `explain: true`, showing each result with why it
// ranked there — per signal its rank in that signal's own list, raw value, weight and
// contribution to the fused score (the bars are the contributions, to scale).
import { api } from './api.js';
import { budgetNotice, errorBox, h, num, show } from './dom.js';

const TYPES = ['semantic', 'episodic', 'procedural'];

export function recallView(root) {
  const query = h('input', { id: 'recall-query', name: 'query', required: true, autocomplete: 'off' });
  const entity = h('input', { id: 'recall-entity', name: 'entity', autocomplete: 'off', placeholder: 'any' });
  const limit = h('input', { id: 'recall-limit', name: 'limit', type: 'number', min: 1, max: 1000, value: 5 });
  const types = TYPES.map((type) => h('input', { id: `recall-type-${type}`, type: 'checkbox', value: type, checked: true }));
  const explain = h('input', { id: 'recall-explain', type: 'checkbox', checked: true });
  const results = h('div', { id: 'recall-results', 'aria-live': 'polite' });

  async function run(event) {
    event.preventDefault();
    const chosen = types.filter((box) => box.checked).map((box) => box.value);
    const body = { query: query.value, limit: Number(limit.value) || 5, types: chosen.length === TYPES.length ? null : chosen };
    if (entity.value.trim()) body.entity = entity.value.trim();
    if (explain.checked) body.explain = true;
    show(results, h('p', { class: 'muted' }, 'Recalling…'));
    try {
      show(results, answer(await api.recall(body), explain.checked));
    } catch (error) {
      show(results, errorBox(error));
    }
  }

  root.append(h('section', { class: 'panel', 'aria-labelledby': 'recall-title' },
    h('h2', { id: 'recall-title' }, 'Recall playground'),
    h('form', { class: 'grid', onsubmit: run },
      h('label', { for: 'recall-query' }, 'Query'), query,
      h('label', { for: 'recall-entity' }, 'Entity'), entity,
      h('label', { for: 'recall-limit' }, 'Limit'), limit,
      h('fieldset', { class: 'wide' }, h('legend', {}, 'Types'),
        types.map((box) => h('label', { class: 'check' }, box, ` ${box.value}`))),
      h('label', { class: 'check wide' }, explain, ' Explain the ranking'),
      h('button', { type: 'submit', class: 'wide' }, 'Recall')),
    results));
}

function answer(result, explained) {
  const { memories, contradictions } = result;
  if (memories.length === 0) return h('p', { class: 'muted' }, 'Nothing recalled.');
  const best = Math.max(...memories.map((m) => m.explanation?.score ?? m.score ?? 0), 1e-9);
  return [
    budgetNotice(result),
    contradictions.length === 0 ? null : h('section', { class: 'contradictions' },
      h('h3', {}, 'Contradictions'), h('ul', {}, contradictions.map((c) => h('li', {}, c.description)))),
    h('ol', { class: 'cards results' }, memories.map((memory, i) => h('li', { class: 'card result' },
      h('p', { class: 'content' }, h('span', { class: 'role' }, `${i + 1}.`), memory.content),
      h('p', { class: 'meta' }, `${memory.memory_type} · score ${num(memory.score)} · confidence ${num(memory.confidence, 2)} · stability ${num(memory.stability, 2)}`),
      memory.explanation ? explanation(memory.explanation, best)
        : explained ? h('p', { class: 'muted' }, 'No explanation returned (this service does not support explain).') : null))),
  ];
}

function explanation({ score, signals }, best) {
  return h('table', { class: 'explain' },
    h('caption', {}, `Why: fused score ${num(score, 4)} = sum of contributions`),
    h('thead', {}, h('tr', {}, ['Signal', 'Rank', 'Raw', 'Weight', 'Contribution'].map((title) => h('th', { scope: 'col' }, title)), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Share')))),
    h('tbody', {}, signals.map((signal) => h('tr', { 'data-signal': signal.signal },
      h('th', { scope: 'row' }, signal.signal),
      h('td', { class: 'n' }, signal.rank === null ? '—' : String(signal.rank)),
      h('td', { class: 'n' }, num(signal.raw, 4)),
      h('td', { class: 'n' }, num(signal.weight, 3)),
      h('td', { class: 'n' }, num(signal.contribution, 4)),
      h('td', { class: 'bar-cell', 'aria-hidden': 'true' }, bar(signal.contribution / best))))));
}

/** A bar `share` (0–1) wide; set through the style property, which the page's CSP allows (a style attribute it would not). */
function bar(share) {
  const element = h('span', { class: 'bar' });
  element.style.width = `${(Math.max(0, Math.min(1, share)) * 100).toFixed(1)}%`;
  return element;
}
