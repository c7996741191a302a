// Building the page without HTML strings. Every piece of memory text is user data, so it only
// ever becomes a Text node (textContent / createTextNode): nothing here parses markup, and the
// page's Content-Security-Policy refuses inline scripts besides.

/**
 * h('button', { class: 'danger', onclick: fn, 'aria-label': 'x' }, 'text', childNode, [more])
 * Attributes: `on*` functions become listeners, `false`/null/undefined are left out, anything
 * else is set as a string attribute. Children: strings become Text nodes; arrays are flattened.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Like h, for SVG elements (the latency chart). */
export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

function setAttributes(element, attributes) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function show(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

/** A number shown with at most `digits` decimals ('—' for null). */
export function num(value, digits = 3) {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  return Number(value.toFixed(digits)).toString();
}

/** A date and time in the reader's locale ('—' for null: new Date(null) would be 1970). */
export function when(iso) {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
}

/** An error box for a failed call: the API's message and code, as text. */
export function errorBox(error) {
  return h('p', { class: 'error', role: 'alert' }, error.message, error.code ? h('code', {}, ` ${error.code}`) : null);
}

/** Says a list is not whole: why, and what to do to see more. */
export function cutNotice(text) {
  return h('p', { class: 'notice', role: 'note' }, text);
}

/** The notice for an answer the service cut to its response budget (X-Result-Truncated). */
export function budgetNotice(answer) {
  return answer.truncated
    ? cutNotice('Some memories are not shown: the answer was cut to the service\'s response budget (SERVICE_MAX_RESPONSE_BYTES).')
    : null;
}

/**
 * Asks before a change, in the page's one <dialog>: resolves true only on the confirm button.
 * The dialog is modal (focus stays in it, Escape cancels). Focus moves to the dialog itself, so
 * a screen reader reads its title (aria-labelledby) and message (aria-describedby) first; Tab
 * then reaches Cancel, the safe choice, before Confirm. Focus returns to where it was.
 */
export function confirmAction({ title, message, confirmLabel }) {
  const dialog = document.getElementById('confirm');
  const opener = document.activeElement;
  show(dialog.querySelector('h2'), title);
  show(dialog.querySelector('#confirm-message'), message);
  const confirmButton = dialog.querySelector('[value=confirm]');
  confirmButton.textContent = confirmLabel;
  dialog.returnValue = '';
  dialog.showModal();
  dialog.focus();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(dialog.returnValue === 'confirm');
    }, { once: true });
  });
}

/**
 * Previous / Next under a paged list: "from–to of total" (or `empty` when there is nothing),
 * and `move(offset)` called with the page's new start.
 */
export function pager({ offset, page, total, empty, move }) {
  const last = Math.min(offset + page, total);
  return h('div', { class: 'pager' },
    h('span', { class: 'muted' }, total === 0 ? empty : `${offset + 1}–${last} of ${total}`),
    h('button', { type: 'button', class: 'quiet', disabled: offset === 0, onclick: () => move(Math.max(0, offset - page)) }, 'Previous'),
    h('button', { type: 'button', class: 'quiet', disabled: last >= total, onclick: () => move(offset + page) }, 'Next'));
}
