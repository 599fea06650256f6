// search.js: one search box in the header across devices, IP addresses, commands and
// logs. Each kind is the API's own ?q= search, asked in parallel for the kinds the user
// may see; a section shows the first matches and links to the whole filtered list.

import { h, clear, link, pageHead, loading, errorBox, outcomeBadge, fmtTime, table, refText, lowerFirst } from './dom.js';
import { get, qs, T } from './api.js';
import { route, query, navigate } from './router.js';
import { can } from './session.js';
import { emptyState } from './list.js';

const SHOWN = 10;

/** KINDS are what the header search looks through, in the order their results show. */
const KINDS = [
  { title: 'Devices', type: 'dcim.device', path: '/api/dcim/devices/', list: '/ui/devices/', columns: [
    { label: 'Name', cell: (d) => link(`/ui/devices/${d.id}`, d.name) }, { label: 'Site', cell: (d) => refText(d.site) },
    { label: 'Platform', cell: (d) => refText(d.platform) }, { label: 'Primary IP', cell: (d) => (d.primary_ip ? d.primary_ip.address : '—') }] },
  { title: 'IP addresses', type: 'ipam.ipaddress', path: '/api/ipam/ip-addresses/', list: '/ui/ip-addresses/', columns: [
    { label: 'Address', cell: (ip) => link(`/ui/ip-addresses/${ip.id}`, ip.address) },
    { label: 'Device', cell: (ip) => (ip.assigned_object && ip.assigned_object.device ? link(`/ui/devices/${ip.assigned_object.device.id}`, ip.assigned_object.device.name) : '—') },
    { label: 'DNS name', cell: (ip) => ip.dns_name || '—' }] },
  { title: 'Commands', type: 'netbox_toolkit_plugin.command', path: `${T}/commands/`, list: '/ui/commands/', columns: [
    { label: 'Name', cell: (c) => link(`/ui/commands/${c.id}`, c.name) }, { label: 'Command', class: 'wrap', cell: (c) => h('code', {}, c.command) },
    { label: 'Platforms', cell: (c) => c.platforms.map((p) => p.name).join(', ') }] },
  { title: 'Command logs', type: 'netbox_toolkit_plugin.commandlog', path: `${T}/command-logs/`, list: '/ui/logs/', columns: [
    { label: '#', cell: (l) => link(`/ui/logs/${l.id}`, String(l.id)) }, { label: 'When', cell: (l) => fmtTime(l.created) },
    { label: 'Command', cell: (l) => (l.command ? l.command.name : '—') }, { label: 'Device', cell: (l) => (l.device ? l.device.name : '—') },
    { label: 'User', cell: (l) => l.username }, { label: 'Result', cell: (l) => outcomeBadge(l) }] },
];

/** searchBox is the header's search form; "/" anywhere outside a field focuses it. */
export function searchBox() {
  const input = h('input', { type: 'search', name: 'q', id: 'site-search', placeholder: 'Search devices, commands, logs…', 'aria-label': 'Search devices, IP addresses, commands and logs', autocomplete: 'off', value: query().q || '' });
  const form = h('form', { class: 'site-search', role: 'search', action: '/ui/search' }, input,
    h('button', { type: 'submit', class: 'btn small', 'aria-label': 'Search' }, 'Search'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const q = input.value.trim();
    navigate(`/ui/search${qs({ q })}`);
  });
  return form;
}

document.addEventListener('keydown', (e) => {
  if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
  const box = document.getElementById('site-search');
  if (box && box.offsetParent !== null) { e.preventDefault(); box.focus(); box.select(); }
});

async function section(kind, q) {
  const box = h('section', { class: 'card search-kind', 'aria-label': kind.title }, h('h2', {}, kind.title), loading());
  (async () => {
    try {
      const page = await get(kind.path + qs({ q, limit: SHOWN }));
      const more = page.count > SHOWN ? link(`${kind.list}${qs({ q })}`, `All ${page.count} ${lowerFirst(kind.title)} matching “${q}” →`) : null;
      clear(box, h('h2', {}, kind.title, ' ', h('span', { class: 'badge' }, String(page.count))),
        page.count ? table(kind.columns, page.results) : h('p', { class: 'muted' }, `No ${lowerFirst(kind.title)} match.`),
        more ? h('p', {}, more) : null);
    } catch (err) {
      clear(box, h('h2', {}, kind.title), errorBox(err));
    }
  })();
  return box;
}

async function searchPage(main) {
  const q = (query().q || '').trim();
  const input = h('input', { type: 'search', name: 'q', id: 'search-page-q', value: q, placeholder: 'a name, an address, a command…', 'aria-label': 'Search' });
  const form = h('form', { class: 'filters search-page', role: 'search' },
    h('div', { class: 'filter grow' }, h('label', { for: 'search-page-q' }, 'Search devices, IP addresses, commands and logs'), input),
    h('div', { class: 'filter filter-buttons' }, h('button', { type: 'submit', class: 'btn primary' }, 'Search')));
  form.addEventListener('submit', (e) => { e.preventDefault(); navigate(`/ui/search${qs({ q: input.value.trim() })}`); });
  const header = document.getElementById('site-search');
  if (header) header.value = q;
  clear(main, pageHead(q ? `Search: ${q}` : 'Search'), form);
  if (!q) {
    main.append(emptyState('Type part of a device name, an IP address, a command or a user; press / anywhere to get here.'));
    input.focus();
    return;
  }
  const kinds = KINDS.filter((k) => can(k.type, 'view'));
  if (!kinds.length) { main.append(emptyState('You may not see devices, commands or logs, so there is nothing to search.')); return; }
  for (const k of kinds) main.append(await section(k, q));
}

export function registerSearch() {
  route('/ui/search', searchPage);
}
