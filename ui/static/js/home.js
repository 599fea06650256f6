// home.js: where a user lands and what a user who may not do something is told: the
// navigation (shown by permission), the first page a user may open, the welcome page of
// a user who may open none, and the "not allowed" panel with whom to ask.

import { h, clear, link, pageHead, lowerFirst, statusBadge } from './dom.js';
import { get } from './api.js';
import { route } from './router.js';
import { session, isSuper, can } from './session.js';

const CMD = 'netbox_toolkit_plugin.command';
const LOG = 'netbox_toolkit_plugin.commandlog';
const SCHED = 'netbox_toolkit_plugin.schedule';

/**
 * NAV is the side navigation: [group, [[label, href, object type, action on it (view
 * when absent)]], admin only].
 */
export const NAV = [
  ['Run', [['Devices', '/ui/devices/', 'dcim.device'], ['Run on several', '/ui/run/', CMD], ['Commands', '/ui/commands/', CMD],
    ['Credentials', '/ui/credentials/'], ['Parse', '/ui/parse/', CMD], ['Logs', '/ui/logs/', LOG], ['Statistics', '/ui/statistics/', LOG],
    ['Backups', '/ui/backups/', 'netbox_toolkit_plugin.configversion'], ['Config search', '/ui/config-versions/', 'netbox_toolkit_plugin.configversion']]],
  ['Inventory', [['Sites', '/ui/sites/', 'dcim.site'], ['Platforms', '/ui/platforms/', 'dcim.platform'], ['Interfaces', '/ui/interfaces/', 'dcim.interface'],
    ['VLANs', '/ui/vlans/', 'ipam.vlan'], ['IP addresses', '/ui/ip-addresses/', 'ipam.ipaddress'], ['Tags', '/ui/tags/', 'extras.tag'],
    ['Import', '/ui/import/', 'dcim.device', 'add']]],
  ['Automation', [['Schedules', '/ui/schedules/', SCHED],
    ['Service credentials', '/ui/service-credentials/', 'netbox_toolkit_plugin.devicecredentialset', 'service'],
    ['Webhooks', '/ui/webhooks/', 'extras.webhook'], ['Event rules', '/ui/event-rules/', 'extras.eventrule'],
    ['Deliveries', '/ui/webhook-deliveries/', 'netbox_toolkit_plugin.webhookdelivery'],
    ['Backup health', '/ui/backup-health/', 'netbox_toolkit_plugin.configversion']]],
  ['Hub', [['Hub sites', '/ui/hub-sites/', 'netbox_toolkit_plugin.hubsite']], false, 'hub'],
  ['Admin', [['Users', '/ui/users/'], ['Groups', '/ui/groups/'], ['API tokens', '/ui/tokens/'], ['Permissions', '/ui/permissions/']], true],
];

/** navItems are the navigation's entries the user may open, by group (the hub's on a hub only). */
export function navItems() {
  return NAV.filter(([, , admin, hub]) => (!admin || isSuper()) && (!hub || session.hub))
    .map(([title, items]) => [title, items.filter(([, , type, action]) => !type || can(type, action || 'view'))])
    .filter(([, items]) => items.length);
}

/**
 * hubLine is the navigation's last line on a site that pushes to a hub: whether the hub
 * has everything, or how far behind it is and why (read from /api/status/).
 */
export function hubLine() {
  const el = h('p', { class: 'nav-hub muted', id: 'nav-hub' });
  get('/api/status/', { auth: false }).then((st) => {
    const hub = st && st.hub;
    if (!hub) return;
    const behind = hub.pending ? `${hub.pending.toLocaleString()} records behind (${Math.round(hub.behind_seconds)} s)` : 'up to date';
    clear(el, 'Hub: ', statusBadge(hub.state, hub.state === 'ok' ? 'connected' : hub.state.replace('_', ' ')), ' ', behind);
    if (hub.last_error) el.title = hub.last_error;
  }).catch(() => {});
  return el;
}

/**
 * homePath is where a user lands: the devices when they may see them, else the first
 * page of the navigation they may open that shows something of the install, else the
 * welcome page (credential sets alone are no place to start).
 */
export function homePath() {
  for (const [, items] of navItems()) {
    for (const [, href, type, action] of items) if (type && !action) return href;
  }
  return '/ui/welcome';
}

/** mayDo lists, in words with links, what the user holds. */
function mayDo() {
  const out = [];
  for (const [, items] of navItems()) {
    for (const [label, href, type, action] of items) {
      if (type && !action) out.push(h('li', {}, 'see ', link(href, lowerFirst(label))));
    }
  }
  if (can(CMD, 'execute_show')) out.push(h('li', {}, 'run show commands from a device page'));
  if (can(CMD, 'execute_config')) out.push(h('li', {}, 'run config commands from a device page'));
  out.push(h('li', {}, 'keep your own device logins: ', link('/ui/credentials/', 'credential sets')));
  return h('ul', { class: 'may-do' }, out);
}

/** whomToAsk names the administrators, who can grant permissions. */
export function whomToAsk() {
  const admins = session.administrators || [];
  if (!admins.length) return h('p', {}, 'Ask whoever runs this FieldKit server to grant you permissions.');
  return h('div', {},
    h('p', {}, `Permissions are granted by ${admins.length === 1 ? 'the administrator' : 'an administrator'}:`),
    h('ul', { class: 'contacts' }, admins.map((a) => h('li', {},
      h('strong', {}, a.name || a.username), a.name ? ` (${a.username})` : '',
      a.email ? [' · ', h('a', { href: `mailto:${a.email}` }, a.email)] : null))),
    h('p', { class: 'muted' }, 'Tell them your username, ', h('strong', {}, session.user.username), ', and what you need to do (for example: run show commands on the devices of one site).'));
}

function welcomePage(main) {
  const none = homePath() === '/ui/welcome';
  clear(main, pageHead(`Welcome, ${session.user.username}`),
    h('section', { class: 'card' },
      none ? h('h2', {}, 'Your account has no permissions yet') : h('h2', {}, 'What you may do'),
      none ? h('p', {}, 'You are logged in, but nobody has allowed you to see devices, commands or logs, so there is nothing to show here.') : null,
      none ? h('p', {}, 'What you may do now:') : null, mayDo()),
    isSuper() ? null : h('section', { class: 'card' }, h('h2', {}, none ? 'Whom to ask' : 'Whom to ask for more'), whomToAsk()));
}

/** notAllowed is the page of a 403: what the user may do instead, and whom to ask. */
export function notAllowed(main, err) {
  clear(main, pageHead('Not allowed'),
    h('div', { class: 'msg error', role: 'alert' }, h('strong', {}, 'You may not open this page. '), err.message),
    h('section', { class: 'card' }, h('h2', {}, 'What you may do'), mayDo()),
    isSuper() ? null : h('section', { class: 'card' }, h('h2', {}, 'Whom to ask'), whomToAsk()));
}

export function registerHome() {
  route('/ui/welcome', welcomePage);
}
