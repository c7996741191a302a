// The console's entry: asks for the key when the service wants one, then shows one section at
// a time, picked by the URL fragment (#entities, #entity/<name>, #episodes, #episodes/<name>,
// #memory/<id>, #recall, #snapshots, #stats), so the browser's back button and links work.
import { api, session, unauthorized } from './api.js';
import { entitiesView, entityView } from './entities.js';
import { episodesView } from './episodes.js';
import { memoryView } from './memory.js';
import { recallView } from './recall.js';
import { snapshotsView } from './snapshots.js';
import { statsView } from './stats.js';

const $ = (id) => document.getElementById(id);
const main = $('main');
/** The shown section's clean-up (the stats view stops polling). */
let leave = () => {};

/** The decoded URL fragment; '' (the entities list) when it is not valid percent-encoding. */
function fragment() {
  try {
    return decodeURIComponent(location.hash.slice(1));
  } catch {
    return '';
  }
}

function route() {
  leave();
  leave = () => {};
  const hash = fragment();
  const [section, ...rest] = hash.split('/');
  const views = { entities: entitiesView, episodes: episodesView, recall: recallView, snapshots: snapshotsView, stats: statsView };
  let view = views[section];
  if (section === 'entity' && rest.length) view = (root) => entityView(root, rest.join('/'));
  if (section === 'episodes' && rest.length) view = (root) => episodesView(root, rest.join('/'));
  if (section === 'memory' && rest.length) view = (root) => memoryView(root, rest.join('/'));
  if (!view) view = entitiesView;
  // A memory's history belongs to the entities section (it is reached from an entity's page).
  const tab = section === 'entity' || section === 'memory' ? 'entities' : section;
  for (const link of document.querySelectorAll('#tabs a')) {
    const current = link.getAttribute('href') === `#${tab}`;
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  main.replaceChildren();
  leave = view(main) ?? (() => {});
}

function signedIn(health) {
  $('sign-in').hidden = true;
  $('tabs').hidden = false;
  $('sign-out').hidden = !session.key;
  $('service').textContent = health ? `memory-runtime ${health.version}` : '';
  void showNamespace();
  route();
}

/**
 * Says which namespace every view acts on; an operator key (one that may list namespaces) gets a
 * switch. A key bound to a namespace gets 403 for the list and just sees its own.
 */
async function showNamespace() {
  const { namespace } = await api.stats().catch(() => ({ namespace: null }));
  if (namespace === null) return;
  $('namespace-name').textContent = namespace;
  $('namespace-line').hidden = false;
  const listed = await api.namespaces().then((r) => r.namespaces.map((n) => n.namespace), () => null);
  const select = $('namespace-switch');
  if (listed === null) {
    select.hidden = true;
    return;
  }
  const names = listed.includes(namespace) ? listed : [namespace, ...listed];
  select.replaceChildren(...names.map((name) => {
    const option = document.createElement('option');
    option.value = name;
    option.textContent = name;
    option.selected = name === namespace;
    return option;
  }));
  select.hidden = false;
}

$('namespace-switch').addEventListener('change', (event) => {
  session.namespace = event.target.value;
  void showNamespace();
  route();
});

function askForKey(message = '') {
  leave();
  leave = () => {};
  main.replaceChildren();
  $('tabs').hidden = true;
  $('sign-out').hidden = true;
  $('sign-in').hidden = false;
  $('key-error').textContent = message;
  $('key-input').focus();
}

$('key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const key = $('key-input').value.trim();
  // A new key acts on its own namespace until an operator key switches.
  if (key !== session.key) session.namespace = null;
  try {
    await api.check(key);
  } catch (error) {
    $('key-error').textContent = error.status === 401 ? 'That key was refused.' : error.message;
    return;
  }
  session.key = key;
  $('key-input').value = '';
  signedIn(await api.health().catch(() => null));
});

$('sign-out').addEventListener('click', () => {
  forgetKey();
  askForKey();
});

/**
 * The key is gone: so is the namespace an operator key switched to. The next key starts on its
 * own namespace (a bound key naming another would be refused, 403, and could not sign in).
 */
function forgetKey() {
  session.key = null;
  session.namespace = null;
  $('namespace-line').hidden = true;
}

unauthorized.addEventListener('unauthorized', () => {
  forgetKey();
  askForKey('The key was refused; enter it again.');
});

window.addEventListener('hashchange', () => {
  if ($('sign-in').hidden) route();
});

// Start: no key at all when the service has none, or the key typed earlier in this tab, opens the
// console directly. Without a key nothing authenticated is called: a keyless probe would count as
// a failed sign-in against the address every browser behind a proxy shares with the agents.
(async () => {
  try {
    const { auth_required: authRequired } = await api.service();
    if (authRequired && !session.key) return askForKey();
    if (authRequired) await api.check(session.key);
    signedIn(await api.health().catch(() => null));
  } catch (error) {
    if (error.status === 401) askForKey('The stored key was refused.');
    else askForKey(error.message);
  }
})();
