// Deletion snapshots (GET /v1/snapshots, oldest first — shown newest first) and the one change
// this view allows: restoring a snapshot through the running service, behind a confirmation.
import { api } from './api.js';
import { confirmAction, errorBox, h, show, when } from './dom.js';

export function snapshotsView(root) {
  const list = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  const outcome = h('div', { id: 'restore-outcome', 'aria-live': 'polite' });
  root.append(h('section', { class: 'panel', 'aria-labelledby': 'snapshots-title' },
    h('h2', { id: 'snapshots-title' }, 'Deletion snapshots'),
    h('p', { class: 'muted' }, 'Every entity deletion first writes its memories to a snapshot. Restoring puts back the ones no longer present; restoring twice changes nothing.'),
    outcome, list));

  async function load() {
    try {
      // The service restores only into the namespace it serves (409 SNAPSHOT_CONFLICT otherwise).
      const [{ snapshots }, { namespace }] = await Promise.all([api.snapshots(), api.stats()]);
      show(list, snapshots.length === 0 ? h('p', { class: 'muted' }, 'No snapshots.') : table([...snapshots].reverse(), namespace));
    } catch (error) {
      show(list, error.status === 404 && error.code === 'ROUTE_NOT_FOUND'
        ? h('p', { class: 'muted' }, 'This service cannot list or restore snapshots online (GET /v1/snapshots).')
        : errorBox(error));
    }
  }

  function table(snapshots, served) {
    return h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Captured', 'Entity', 'Namespace', 'Memories', 'Snapshot', ''].map((title) => h('th', { scope: 'col' }, title)))),
      h('tbody', {}, snapshots.map((snapshot) => h('tr', { 'data-snapshot': snapshot.snapshot_id },
        h('td', {}, snapshot.problem ? '—' : when(snapshot.captured_at)),
        h('td', {}, snapshot.entity),
        h('td', {}, snapshot.namespace),
        // A damaged file is listed with its problem and nothing read from it (counts {}).
        h('td', {}, snapshot.problem ? '—' : `${snapshot.memory_count} (${snapshot.counts.semantic} semantic, ${snapshot.counts.episodic} episodic, ${snapshot.counts.procedural} procedural)`),
        h('td', {}, h('code', {}, snapshot.snapshot_id.slice(0, 8))),
        h('td', {}, snapshot.problem ? h('span', { class: 'error' }, snapshot.problem) : restoreButton(snapshot, served))))));
  }

  function restoreButton(snapshot, served) {
    const label = `Restore ${snapshot.entity} (${snapshot.snapshot_id})`;
    if (snapshot.namespace !== served) {
      const why = `snapshot-why-${snapshot.snapshot_id}`;
      return [
        h('button', { type: 'button', disabled: true, 'aria-label': label, 'aria-describedby': why }, 'Restore…'),
        h('span', { id: why, class: 'muted' }, ` Taken in namespace "${snapshot.namespace}"; this service serves "${served}" (restore it offline with memory-runtime restore --force).`),
      ];
    }
    return h('button', { type: 'button', 'aria-label': label, onclick: (event) => void restore(snapshot, event.currentTarget) }, 'Restore…');
  }

  async function restore(snapshot, button) {
    const sure = await confirmAction({
      title: `Restore ${snapshot.entity}?`,
      message: `Puts back the ${snapshot.memory_count} memories of "${snapshot.entity}" captured ${when(snapshot.captured_at)}; those still present are left as they are.`,
      confirmLabel: 'Restore',
    });
    if (!sure) return;
    button.disabled = true;
    try {
      const result = await api.restore(snapshot.snapshot_id);
      show(outcome, h('p', { class: 'ok', role: 'status' },
        `Restored ${result.restored_count} memories of `, h('a', { href: `#entity/${encodeURIComponent(result.entity)}` }, result.entity),
        ` (${result.already_present_count} already present).`));
    } catch (error) {
      show(outcome, errorBox(error));
    } finally {
      button.disabled = false;
    }
  }

  void load();
}
