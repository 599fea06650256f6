// sync.js: the "Sync from NetBox" button and the sync's status. The button runs a sync
// through the API (the request waits for it) and shows its progress meanwhile by asking
// the status every second.

import { h, add, clear, errorBox, spinner, toast, fmtTime, fmtAgo } from './dom.js';
import { get, post, T } from './api.js';
import { can } from './session.js';

const PATH = `${T}/inventory-sync/`;

/** mayRunSync reports whether the user may run a sync (the server decides in the end). */
export const mayRunSync = () => can('dcim.device', 'add') && can('dcim.device', 'change');

/**
 * syncButton is the button, or null when no NetBox is configured or the user may not
 * sync. done(report) runs after a sync that worked.
 */
export async function syncButton(done) {
  if (!mayRunSync()) return null;
  const st = await get(PATH).catch(() => null);
  if (!st || !st.configured) return null;
  const note = h('span', { class: 'muted sync-note', 'aria-live': 'polite' });
  const btn = h('button', { type: 'button', class: 'btn', title: `Sync the devices of ${st.netbox_url}${st.filter ? ` (${st.filter})` : ''}` }, 'Sync from NetBox');
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    clear(btn, spinner(), ' Syncing…');
    const poll = setInterval(async () => {
      const s = await get(PATH).catch(() => null);
      if (s && s.running && s.progress) note.textContent = s.progress;
    }, 1000);
    try {
      const rep = await post(PATH, {});
      note.textContent = summary(rep);
      toast(`Synced from NetBox: ${summary(rep)}`);
      if (done) done(rep);
    } catch (err) {
      note.replaceChildren(errorBox(err, 'Sync failed'));
    } finally {
      clearInterval(poll);
      btn.disabled = false;
      btn.textContent = 'Sync from NetBox';
    }
  });
  return h('span', { class: 'sync' }, btn, note);
}

/** summary is a report in a line: what the sync did to devices, and in all. */
export function summary(rep) {
  const d = rep.objects.devices || {};
  let changed = 0;
  for (const c of Object.values(rep.objects)) changed += c.created + c.updated + c.deleted + c.kept;
  return `${d.fetched || 0} devices (${d.created || 0} new, ${d.updated || 0} changed, ${d.deleted || 0} removed); ${changed} objects changed in all`;
}

/** syncCard shows where the sync reads from and its last runs, with the button. */
export async function syncCard() {
  const st = await get(PATH).catch(() => null);
  if (!st) return null;
  const card = h('section', { class: 'card' }, h('h2', {}, 'From NetBox'));
  if (!st.configured) {
    card.append(h('p', { class: 'muted' }, 'No NetBox is configured. Set inventory.netbox_url and inventory.netbox_token (see the README) to sync devices from one.'));
    return card;
  }
  const runs = h('ul', { class: 'history' }, st.runs.map((r) => h('li', {},
    `${fmtTime(r.started)} · ${r.state === 'fetching' ? (st.running ? 'running' : 'interrupted: the next sync resumes it') : r.state}`,
    r.state === 'done' && r.summary && r.summary.objects ? ` · ${summary(r.summary)}` : '',
    r.error ? h('div', { class: 'field-error' }, r.error) : null)));
  add(card,
    h('p', {}, 'Devices of ', h('code', {}, st.netbox_url), st.filter ? [' matching ', h('code', {}, st.filter)] : ' (all of them)',
      ', with their sites, platforms, interfaces, addresses, VLANs and tags. Synced objects are read-only here.'),
    st.runs.length ? [h('h3', {}, `Last syncs (latest ${fmtAgo(st.runs[0].started)})`), runs] : h('p', { class: 'muted' }, 'Never synced yet.'));
  const btn = await syncButton(() => syncCard().then((c) => c && card.replaceWith(c)));
  if (btn) card.append(h('div', { class: 'actions' }, btn));
  return card;
}
