// resources.js: inventory and user administration as data. Each resource names its
// API path, list columns and filters; its form fields, their labels, help and choices
// come from the server (api.describeFields), with overrides for presentation only. One set of
// pages (list, detail, create, edit, delete) serves them all.

import { h, clear, link, badge, statusBadge, errorBox, loading, pageHead, dl, refText, fmtTime, fmtAgo, confirmDialog, toast, copyButton, lowerFirst } from './dom.js';
import { get, post, patch, del, describeFields } from './api.js';
import { route, navigate } from './router.js';
import { buildForm, metaFields } from './forms.js';
import { listPage, emptyState } from './list.js';
import { can, session } from './session.js';
import { syncButton } from './sync.js';

const val = (x) => (x && typeof x === 'object' && 'label' in x ? x.label : x);
const yes = (b) => (b ? badge('yes', 'ok') : badge('no'));

const refSite = { path: '/api/dcim/sites/' };
const refPlatform = { path: '/api/dcim/platforms/' };
const refDevice = { path: '/api/dcim/devices/' };
const refIface = { path: '/api/dcim/interfaces/' };
const refUser = { path: '/api/users/users/', label: (u) => u.username };
const refGroup = { path: '/api/users/groups/' };

// HUB marks a list column shown at a hub only (a filter says hub: true).
const HUB = true;

// ADVANCED are the connection settings most devices and platforms never change: the form
// keeps them under "More settings".
const ADVANCED = Object.fromEntries(['custom_fields', 'legacy_algorithms', 'connect_timeout', 'command_timeout', 'prompt_pattern']
  .map((k) => [k, { advanced: true }]));

/**
 * RESOURCES: key (URL segment) → definition. A filter with choices takes the named
 * field's. form adjusts the fields the server describes (or is a function of the
 * object's id giving the adjustments).
 */
export const RESOURCES = {
  devices: {
    title: 'Devices', one: 'device', blank: 'Devices are what commands run on: each needs a site, a platform and a primary IP address to connect to.', path: '/api/dcim/devices/', type: 'dcim.device', section: 'inventory',
    columns: [
      ['Name', (d) => link(`/ui/devices/${d.id}`, d.name), 'name'],
      ['Site', (d) => refText(d.site), 'site'], ['Platform', (d) => refText(d.platform), 'platform'],
      ['Primary IP', (d) => (d.primary_ip ? d.primary_ip.address : '—')], ['Status', (d) => statusBadge(d.status), 'status'],
      ['Source', (d) => (d.netbox_id ? badge('NetBox', 'info') : 'local'), 'netbox_id'],
    ],
    filters: [{ name: 'q', label: 'Search' }, { name: 'site_id', label: 'Site', type: 'ref', ref: refSite },
      { name: 'platform_id', label: 'Platform', type: 'ref', ref: refPlatform },
      { name: 'status', label: 'Status', type: 'select', choices: 'status' }],
    // One form onboards a device: its management address and SSH port are fields of
    // their own (the server keeps the interface and the address behind them); the
    // primary IPs are picked among the device's own addresses once it exists.
    form: (id) => ({
      mgmt_ip: { placeholder: '10.0.0.1/24', help: 'the address SSH connects to, with its prefix length; FieldKit keeps it on the interface mgmt0 and makes it the primary IP' },
      ssh_port: { placeholder: '22', help: 'empty: 22' },
      primary_ip4: { editOnly: true, ref: { path: '/api/ipam/ip-addresses/', params: { device_id: id, family: 4 } } },
      primary_ip6: { editOnly: true, ref: { path: '/api/ipam/ip-addresses/', params: { device_id: id, family: 6 } } },
      ...ADVANCED,
    }),
  },
  sites: {
    title: 'Sites', one: 'site', blank: 'Sites group devices by place; every device belongs to one.', path: '/api/dcim/sites/', type: 'dcim.site', section: 'inventory',
    columns: [['Name', (s) => link(`/ui/sites/${s.id}`, s.name), 'name'], ['Slug', (s) => s.slug, 'slug'], ['Description', (s) => s.description],
      ['Devices', (s) => link(`/ui/devices/?site_id=${s.id}`, 'devices')]],
    filters: [{ name: 'q', label: 'Search' }],
  },
  platforms: {
    title: 'Platforms', one: 'platform', blank: 'A platform names a device\'s software (Cisco IOS, Junos…) and picks how FieldKit talks to it; commands are written for platforms.', path: '/api/dcim/platforms/', type: 'dcim.platform', section: 'inventory',
    columns: [['Name', (p) => link(`/ui/platforms/${p.id}`, p.name), 'name'], ['Slug', (p) => p.slug, 'slug'], ['Driver', (p) => p.driver || '(from slug)', 'driver'],
      ['Commands', (p) => link(`/ui/commands/?platform_id=${p.id}`, 'commands')],
      // At a hub, one platform of a slug is shared by the sites that have it.
      ['Sites', (p) => ((p.sites || []).length ? p.sites.map(refText).join(', ') : 'this hub'), null, HUB]],
    filters: [{ name: 'q', label: 'Search' }, { name: 'site_id', label: 'Site', type: 'ref', ref: refSite, hub: true }],
    form: ADVANCED,
    localSettings: true,
  },
  interfaces: {
    title: 'Interfaces', one: 'interface', blank: 'Interfaces belong to devices; a command\'s interface variable offers a device\'s interfaces.', path: '/api/dcim/interfaces/', type: 'dcim.interface', section: 'inventory',
    columns: [['Device', (i) => (i.device ? link(`/ui/devices/${i.device.id}`, i.device.name) : '—'), 'device'], ['Name', (i) => link(`/ui/interfaces/${i.id}`, i.name), 'name'],
      ['Enabled', (i) => yes(i.enabled), 'enabled'], ['Mode', (i) => val(i.mode) || '—', 'mode'], ['Untagged VLAN', (i) => refText(i.untagged_vlan)], ['Description', (i) => i.description]],
    filters: [{ name: 'q', label: 'Search' }, { name: 'device_id', label: 'Device', type: 'ref', ref: refDevice }],
    form: { type: { placeholder: 'other' } },
  },
  vlans: {
    title: 'VLANs', one: 'VLAN', blank: 'A command\'s VLAN variable offers the VLANs of the device\'s site.', path: '/api/ipam/vlans/', type: 'ipam.vlan', section: 'inventory',
    columns: [['VID', (v) => link(`/ui/vlans/${v.id}`, String(v.vid)), 'vid'], ['Name', (v) => v.name, 'name'], ['Site', (v) => refText(v.site), 'site'], ['Status', (v) => statusBadge(v.status), 'status']],
    filters: [{ name: 'q', label: 'Search' }, { name: 'site_id', label: 'Site', type: 'ref', ref: refSite }],
  },
  'ip-addresses': {
    title: 'IP addresses', one: 'IP address', blank: 'A device is reached at its primary IP address, an address on one of its interfaces.', path: '/api/ipam/ip-addresses/', type: 'ipam.ipaddress', section: 'inventory',
    columns: [['Address', (ip) => link(`/ui/ip-addresses/${ip.id}`, ip.address), 'address'], ['Status', (ip) => statusBadge(ip.status), 'status'],
      ['Interface', (ip) => (ip.assigned_object ? `${ip.assigned_object.device ? ip.assigned_object.device.name + ' · ' : ''}${ip.assigned_object.name}` : '—')], ['DNS name', (ip) => ip.dns_name, 'dns_name']],
    filters: [{ name: 'q', label: 'Search' }, { name: 'device_id', label: 'Device', type: 'ref', ref: refDevice }],
    form: { address: { placeholder: '10.0.0.1/24' }, assigned_object_type: false, assigned_object_id: { type: 'ref', ref: refIface, help: undefined } },
    collect: (v) => { if ('assigned_object_id' in v) v.assigned_object_type = v.assigned_object_id ? 'dcim.interface' : null; },
  },
  tags: {
    title: 'Tags', one: 'tag', blank: 'Tags label devices, sites and commands so lists can be filtered by them.', path: '/api/extras/tags/', type: 'extras.tag', section: 'inventory',
    columns: [['Name', (t) => h('span', {}, swatch(t.color), link(`/ui/tags/${t.id}`, t.name)), 'name'], ['Slug', (t) => t.slug, 'slug'], ['Description', (t) => t.description]],
    filters: [{ name: 'q', label: 'Search' }],
    form: { color: { placeholder: '9e9e9e' } },
  },
  schedules: {
    title: 'Schedules', one: 'schedule', blank: 'A schedule runs a command on its own, when due, on the devices it targets (by device, site, platform or tag, resolved at each run), with a service credential set.',
    path: '/api/plugins/toolkit/schedules/', type: 'netbox_toolkit_plugin.schedule', section: 'automation',
    columns: [['Name', (x) => link(`/ui/schedules/${x.id}`, x.name), 'name'],
      ['Status', (x) => h('span', { title: x.status_reason || '' }, statusBadge(x.status), x.status_reason ? h('span', { class: 'muted' }, ` ${x.status_reason}`) : null)],
      ['When', (x) => (x.cron ? h('code', {}, x.cron) : `every ${every(x.interval)}`)], ['Command', (x) => refText(x.command)],
      ['Last run', (x) => (x.last_run ? h('span', {}, runBadge(x.last_run), ` ${fmtAgo(x.last_run.started)}`) : '—')],
      ['Next run', (x) => (x.next_run ? fmtTime(x.next_run) : '—')],
      ['Logs', (x) => link(`/ui/logs/?schedule_id=${x.id}`, 'logs')]],
    filters: [{ name: 'q', label: 'Search' }, { name: 'enabled', label: 'Enabled', type: 'select', options: [['true', 'yes'], ['false', 'no']] }],
    form: {
      credential_set: { ref: { path: '/ui/api/service-credential-sets/' }, help: 'a service credential set (Automation → Service credentials); needs the service permission on it' },
      variables: { help: 'an object of variable name to value, e.g. {"interface": "Gi0/1"}' },
      window_start: { placeholder: '22:00' }, window_end: { placeholder: '05:00' }, cron: { placeholder: '0 2 * * *' },
    },
    detailActions: (x) => (can('netbox_toolkit_plugin.schedule', 'run') ? h('button', { type: 'button', class: 'btn', onclick: async () => {
      try {
        await post(`/api/plugins/toolkit/schedules/${x.id}/run/`, {});
        toast(`Run of ${x.name} started: its last run shows how it went`);
      } catch (err) {
        document.querySelector('main .page-head').after(errorBox(err, 'Not started'));
      }
    } }, 'Run now') : null),
  },
  webhooks: {
    title: 'Webhooks', one: 'webhook', blank: 'A webhook is a receiver (a chat, a ticketing system, a SIEM) that event rules send events to, signed with its secret.',
    path: '/api/extras/webhooks/', type: 'extras.webhook', section: 'automation',
    columns: [['Name', (w) => link(`/ui/webhooks/${w.id}`, w.name), 'name'], ['URL', (w) => h('code', {}, w.payload_url)], ['Method', (w) => w.http_method],
      ['Signed', (w) => yes(!!w.secret)], ['Deliveries', (w) => link(`/ui/webhook-deliveries/?webhook=${w.id}`, 'deliveries')]],
    filters: [{ name: 'q', label: 'Search' }],
    form: {
      secret: { help: 'signs each request (X-Hook-Signature: hex HMAC-SHA512 of the body); shown as ******** once saved; empty removes it' },
      body_template: { help: 'empty: the event as JSON; {{ data.device.name }}, {{ data.error_message | tojson }}, {{ state }}… (see the README)' },
      additional_headers: { help: 'one Name: Value a line' },
      content_types: { advanced: true }, type_create: { advanced: true }, type_update: { advanced: true }, type_delete: { advanced: true },
      type_job_start: { advanced: true }, type_job_end: { advanced: true }, enabled: { advanced: true }, conditions: { advanced: true },
      custom_fields: { advanced: true },
    },
  },
  'event-rules': {
    title: 'Event rules', one: 'event rule', blank: 'An event rule sends a webhook when an execution is logged or a schedule runs, and its conditions hold: by default once when they start to hold and once when they stop.',
    path: '/api/extras/event-rules/', type: 'extras.eventrule', section: 'automation',
    columns: [['Name', (r) => link(`/ui/event-rules/${r.id}`, r.name), 'name'], ['Enabled', (r) => yes(r.enabled), 'enabled'],
      ['On', (r) => `${(r.object_types || []).map((t) => t.split('.')[1]).join(', ')}: ${(r.event_types || []).join(', ')}`],
      ['Webhook', (r) => refText(r.action_object)], ['On changes only', (r) => yes(r.state_changes_only)]],
    filters: [{ name: 'q', label: 'Search' }],
    form: {
      action_object_id: { type: 'ref', ref: { path: '/api/extras/webhooks/' }, label: 'Webhook' },
      action_type: false, action_object_type: false,
      conditions: { help: 'e.g. {"and": [{"attr": "success", "value": false}, {"attr": "site.slug", "value": "paris"}]}; empty: always' },
    },
    collect: (v) => { if ('action_object_id' in v) { v.action_type = 'webhook'; v.action_object_type = 'extras.webhook'; } },
  },
  'webhook-deliveries': {
    title: 'Webhook deliveries', one: 'delivery', blank: 'Each request an event rule sent lands here with its attempts and the receiver\'s answer.',
    path: '/api/plugins/toolkit/webhook-deliveries/', type: 'netbox_toolkit_plugin.webhookdelivery', section: 'automation',
    columns: [['#', (d) => link(`/ui/webhook-deliveries/${d.id}`, String(d.id))], ['When', (d) => fmtTime(d.created), 'created'],
      ['Webhook', (d) => refText(d.webhook)], ['Event', (d) => `${d.event_type} ${d.state === 'resolved' ? '(resolved)' : ''}`],
      ['Status', (d) => statusBadge(val(d.status)), 'status'],
      ['Attempts', (d) => String(d.attempts)], ['Answer', (d) => (d.response_status ? String(d.response_status) : d.error || '—')]],
    filters: [{ name: 'status', label: 'Status', type: 'select', options: [['pending', 'pending'], ['delivered', 'delivered'], ['failed', 'failed']] }],
  },
  users: {
    title: 'Users', one: 'user', blank: 'Users log in to the web interface and own API tokens.', path: '/api/users/users/', type: 'users.user', section: 'admin',
    columns: [['Username', (u) => link(`/ui/users/${u.id}`, u.username), 'username'], ['Name', (u) => `${u.first_name || ''} ${u.last_name || ''}`.trim() || '—'],
      ['Active', (u) => yes(u.is_active), 'is_active'], ['Superuser', (u) => yes(u.is_superuser), 'is_superuser'], ['Groups', (u) => (u.groups || []).map(refText).join(', ') || '—'], ['Last login', (u) => fmtAgo(u.last_login), 'last_login']],
    filters: [{ name: 'q', label: 'Search' }, { name: 'group_id', label: 'Group', type: 'ref', ref: refGroup }],
    form: { password: { editHelp: 'leave empty to keep the current password' }, email: { inputType: 'email' } },
  },
  groups: {
    title: 'Groups', one: 'group', blank: 'Groups give many users the same permissions at once.', path: '/api/users/groups/', type: 'users.group', section: 'admin',
    columns: [['Name', (g) => link(`/ui/groups/${g.id}`, g.name), 'name'], ['Members', (g) => link(`/ui/users/?group_id=${g.id}`, 'users')]],
    filters: [{ name: 'q', label: 'Search' }],
  },
  tokens: {
    title: 'API tokens', one: 'token', blank: 'Scripts, pynetbox and Ansible call the API with a token.', path: '/api/users/tokens/', type: 'users.token', section: 'admin',
    columns: [['Token', (t) => link(`/ui/tokens/${t.id}`, t.display)], ['User', (t) => refText(t.user), 'user'], ['Write', (t) => yes(t.write_enabled), 'write_enabled'],
      ['Expires', (t) => (t.expires ? fmtTime(t.expires) : 'never'), 'expires'], ['Last used', (t) => fmtAgo(t.last_used), 'last_used'], ['Description', (t) => t.description]],
    filters: [{ name: 'user_id', label: 'User', type: 'ref', ref: refUser }],
    form: { user: { help: 'empty = you' }, key: false },
    collect: (v) => { if (v.user == null) delete v.user; },
    secret: 'key',
  },
  'hub-sites': {
    title: 'Hub sites', one: 'site', blank: 'On a hub, each FieldKit site pushes its logs, devices and commands with the token shown when it is added (its hub.token).', path: '/api/plugins/toolkit/hub-sites/', type: 'netbox_toolkit_plugin.hubsite', section: 'hub',
    columns: [['Name', (s) => link(`/ui/hub-sites/${s.id}`, s.name), 'name'], ['State', (s) => hubState(s.state)],
      ['Last batch', (s) => fmtAgo(s.last_batch), 'last_batch'], ['Behind', (s) => hubBehind(s), 'backlog'],
      ['Clock skew', (s) => fmtMillis(s.clock_skew_ms), 'clock_skew_ms'], ['Version', (s) => s.version || '—', 'version'],
      ['Devices', (s) => (s.site ? link(`/ui/devices/?site_id=${s.site.id}`, 'devices') : '—')]],
    filters: [{ name: 'q', label: 'Search' }],
    form: { token: false },
    secret: 'token',
    noDelete: true,
    // A site is revoked (its token fails at once) or given a new token (an edge
    // installed anew), never deleted: what it pushed stays.
    detailActions: (obj, main) => (can(RESOURCES['hub-sites'].type, 'change') ? [
      h('button', { type: 'button', class: 'btn', onclick: async () => {
        const ok = await confirmDialog({ title: 'Give this site a new token?', body: h('p', {}, 'Its current token stops working at once; the new one is shown once, for the site\'s hub.token.'), confirm: 'New token' });
        if (!ok) return;
        const r = RESOURCES['hub-sites'];
        const saved = await post(`${r.path}${obj.id}/token/`);
        clear(main, pageHead(`New token for ${obj.name}`));
        showSecret(main, 'hub-sites', r, saved);
      } }, 'New token'),
      obj.revoked ? null : h('button', { type: 'button', class: 'btn danger', onclick: async () => {
        const ok = await confirmDialog({ title: 'Revoke this site\'s token?', body: h('p', {}, `“${obj.name}” will be refused at its next push. What it sent stays.`), confirm: 'Revoke', danger: true });
        if (!ok) return;
        await post(`${RESOURCES['hub-sites'].path}${obj.id}/revoke/`);
        toast(`Revoked ${obj.name}`);
        navigate(`/ui/hub-sites/${obj.id}`, { replace: true });
      } }, 'Revoke'),
    ].filter(Boolean) : []),
  },
  permissions: {
    title: 'Permissions', one: 'permission', blank: 'Users who are not superusers see and run only what a permission grants them.', path: '/api/users/permissions/', type: 'users.objectpermission', section: 'admin',
    columns: [['Name', (p) => link(`/ui/permissions/${p.id}`, p.name), 'name'], ['Enabled', (p) => yes(p.enabled), 'enabled'], ['Object types', (p) => (p.object_types || []).join(', ')],
      ['Actions', (p) => (p.actions || []).join(', ')], ['Users', (p) => (p.users || []).map(refText).join(', ') || '—'], ['Groups', (p) => (p.groups || []).map(refText).join(', ') || '—']],
    filters: [{ name: 'q', label: 'Search' }, { name: 'user_id', label: 'User', type: 'ref', ref: refUser }],
    form: { constraints: { help: 'an object (all lookups hold) or a list of objects (any holds), Django lookup syntax; "$user" is the requesting user; empty = none. Example: {"platforms__slug": "cisco_ios"}' } },
  },
};

/** hubState is a hub site's state as a badge. */
function hubState(state) {
  return state ? statusBadge(state) : '—';
}

/** fmtMillis is a count of milliseconds in words: 950 ms, 12 s, 6 h 2 min. */
export function fmtMillis(ms) {
  const a = Math.abs(ms || 0);
  const sign = ms < 0 ? '−' : '';
  if (a < 1000) return `${sign}${a} ms`;
  if (a < 60000) return `${sign}${Math.round(a / 1000)} s`;
  if (a < 3600000) return `${sign}${Math.round(a / 60000)} min`;
  const hours = Math.floor(a / 3600000);
  return hours >= 48 ? `${sign}${Math.round(hours / 24)} days` : `${sign}${hours} h ${Math.round((a % 3600000) / 60000)} min`;
}

/** hubBehind is how far behind a hub site is: its records not sent, and how old the oldest is. */
function hubBehind(s) {
  if (!s.backlog) return badge('up to date', 'ok');
  return `${s.backlog.toLocaleString()} records, ${fmtMillis(s.behind_ms)}`;
}

/** addOrAsk is the way to fill an empty list of r: its create page, or whom to ask. */
export function addOrAsk(r, href) {
  if (can(r.type, 'add')) return link(href, `Add ${/^[aeiou]/i.test(r.one) ? 'an' : 'a'} ${r.one}`, { class: 'btn primary' });
  return h('p', { class: 'muted' }, `You may not add ${lowerFirst(r.title)}: ask an administrator.`);
}

/** formFields are a resource's form fields, as the server describes them for a create or an update of id. */
export async function formFields(r, id) {
  return metaFields(await describeFields(id ? `${r.path}${id}/` : r.path), typeof r.form === 'function' ? r.form(id) : r.form);
}

/** listFilters are a resource's filters, those with choices given the field's. */
async function listFilters(r) {
  const filters = r.filters.filter((f) => !f.hub || session.hub);
  if (!filters.some((f) => f.choices)) return filters;
  const desc = await describeFields(r.path);
  return filters.map((f) => (f.choices ? { ...f, options: ((desc[f.choices] || {}).choices || []).map((c) => [c.value, c.display_name]) } : f));
}

function every(sec) {
  if (sec % 3600 === 0) return `${sec / 3600} h`;
  return sec % 60 === 0 ? `${sec / 60} min` : `${sec} s`;
}

function runBadge(run) {
  return statusBadge(run.status);
}

function swatch(color) {
  const el = h('span', { class: 'swatch', 'aria-hidden': 'true' });
  if (/^[0-9a-f]{6}$/i.test(color || '')) el.style.background = `#${color}`;
  return el;
}

const skip = new Set(['id', 'url', 'display', 'custom_fields']);

/** detailPairs lists an object's fields for a detail page (the form's fields first, in
 * the form's order; timestamps last), references as links. */
export function detailPairs(obj, order = []) {
  const rank = (k) => {
    const i = order.indexOf(k);
    return i >= 0 ? i : k === 'created' || k === 'last_updated' ? 1000 : 500;
  };
  return Object.entries(obj).filter(([k]) => !skip.has(k)).sort((a, b) => rank(a[0]) - rank(b[0])).map(([k, v]) => [k[0].toUpperCase() + k.slice(1).replace(/_/g, ' '), showValue(v)]);
}

function showValue(v) {
  if (v == null || v === '') return '—';
  if (typeof v === 'boolean') return yes(v);
  if (Array.isArray(v)) return v.length ? v.map((x) => (typeof x === 'object' ? refText(x) : String(x))).join(', ') : '—';
  if (typeof v === 'object') {
    if ('label' in v && 'value' in v) return String(v.label);
    if (v.url && v.id) return refLink(v);
    if (v.display || v.name) return refText(v);
    return h('code', {}, JSON.stringify(v));
  }
  if (typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v)) return fmtTime(v);
  return String(v);
}

function refLink(v) {
  const m = /\/api\/\w+\/([\w-]+)\/(\d+)\/$/.exec(v.url);
  const key = m && (m[1] === 'commands' ? 'commands' : m[1]);
  return key && (RESOURCES[key] || key === 'commands') ? link(`/ui/${key}/${m[2]}`, refText(v)) : refText(v);
}

export function deleteButton(r, obj, after) {
  return h('button', { type: 'button', class: 'btn danger', onclick: async () => {
    const ok = await confirmDialog({ title: `Delete this ${r.one}?`, body: h('p', {}, `“${obj.display || obj.name || obj.id}” will be deleted. This cannot be undone.`), confirm: 'Delete', danger: true });
    if (!ok) return;
    try {
      await del(`${r.path}${obj.id}/`);
      toast(`Deleted ${r.one} ${obj.display || obj.name || ''}`);
      navigate(after);
    } catch (err) {
      document.querySelector('main .page-head').after(errorBox(err, 'Not deleted'));
    }
  } }, 'Delete');
}

async function detailPage(main, key, id) {
  const r = RESOURCES[key];
  clear(main, loading());
  const obj = await get(`${r.path}${id}/`);
  const order = Object.keys(await describeFields(r.path).catch(() => ({})));
  const synced = obj.netbox_id != null;
  clear(main, pageHead(`${r.one[0].toUpperCase()}${r.one.slice(1)}: ${obj.display || obj.name || obj.id}`,
    can(r.type, 'change') && (!synced || r.localSettings) ? link(`/ui/${key}/${id}/edit`, synced ? 'Edit FieldKit settings' : 'Edit', { class: 'btn' }) : null,
    can(r.type, 'delete') && !synced && !r.noDelete ? deleteButton(r, obj, `/ui/${key}/`) : null, r.detailActions ? r.detailActions(obj, main) : null),
  h('p', {}, link(`/ui/${key}/`, `← all ${lowerFirst(r.title)}`)),
  synced ? h('div', { class: 'msg info', role: 'status' }, `This ${r.one} comes from NetBox (NetBox id ${obj.netbox_id}): change it there; the next sync brings the change here.`,
    r.localSettings ? ' Its FieldKit settings (SSH driver, timeouts, prompt) stay editable here.' : '') : null,
  h('section', { class: 'card' }, dl(detailPairs(obj, order))));
  if (key === 'sites') main.append(h('p', {}, link(`/ui/devices/?site_id=${id}`, 'Devices at this site →')));
}

function showSecret(main, key, r, created) {
  main.append(h('section', { class: 'card secret-once', role: 'alert' },
    h('h2', {}, r.secret === 'key' ? `Your new ${r.one}` : `The ${r.one}'s ${r.secret}`),
    h('p', {}, h('strong', {}, 'Copy it now: you will not see it again.'), ' FieldKit shows it only this once.'),
    h('div', { class: 'secret-row' }, h('code', { class: 'secret', id: 'new-secret' }, created[r.secret]), copyButton(() => created[r.secret])),
    h('p', {}, link(`/ui/${key}/`, `Done: back to ${r.title}`, { class: 'btn' }))));
}

async function formPage(main, key, id) {
  const r = RESOURCES[key];
  clear(main, loading());
  const obj = id ? await get(`${r.path}${id}/`) : {};
  const title = id ? `Edit ${r.one}: ${obj.display || obj.name || id}` : `New ${r.one}`;
  const form = await buildForm({
    fields: await formFields(r, id), initial: obj, isEdit: !!id, submitLabel: id ? 'Save' : `Create ${r.one}`,
    cancelHref: id ? `/ui/${key}/${id}` : `/ui/${key}/`,
    collect: r.collect,
    onSubmit: async (values) => {
      const saved = id ? await patch(`${r.path}${id}/`, values) : await post(r.path, values);
      toast(`${id ? 'Saved' : 'Created'} ${r.one} ${saved.display || saved.name || ''}`);
      if (r.secret && !id && saved[r.secret]) {
        clear(main, pageHead(`New ${r.one} created`));
        showSecret(main, key, r, saved);
        return;
      }
      navigate(key === 'devices' ? `/ui/devices/${saved.id}` : `/ui/${key}/${saved.id}`);
    },
  });
  clear(main, pageHead(title), h('section', { class: 'card' }, form));
  form.querySelector('input:not([type=checkbox]), select, textarea')?.focus();
}

/** registerResources adds the pages of every resource (devices' detail is its own). */
export function registerResources() {
  for (const [key, r] of Object.entries(RESOURCES)) {
    route(`/ui/${key}`, async (main) => listPage(main, {
      title: r.title, path: r.path, filters: await listFilters(r),
      columns: r.columns.filter(([, , , hub]) => !hub || session.hub).map(([label, cell, sort]) => ({ label, cell, sort })),
      actions: [key === 'devices' ? await syncButton(() => navigate(location.pathname + location.search, { replace: true })) : null,
        can(r.type, 'add') ? link(`/ui/${key}/new`, `New ${r.one}`, { class: 'btn primary' }) : null].filter(Boolean),
      empty: emptyState(`No ${lowerFirst(r.title)} yet. ${r.blank}`, addOrAsk(r, `/ui/${key}/new`)),
    }));
    route(`/ui/${key}/new`, (main) => formPage(main, key, null));
    route(`/ui/${key}/:id/edit`, (main, p) => formPage(main, key, p.id));
    if (key !== 'devices') route(`/ui/${key}/:id`, (main, p) => detailPage(main, key, p.id));
  }
}
