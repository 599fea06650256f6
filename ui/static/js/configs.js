// configs.js: config versions. A device's configuration card (its versions, who
// changed what, a backup now), a version's page (its text as shown, secrets masked, and
// the text as read for users who may see it), a version's diff side by side, and the
// site-wide list of each device's last good backup, the devices never backed up first.

import { h, clear, link, loading, pageHead, fmtTime, fmtAgo, table, badge, statusBadge, dl, errorBox, notice } from './dom.js';
import { get, post, T, qs } from './api.js';
import { route, navigate } from './router.js';
import { can } from './session.js';
import { listCredentialSets } from './credentials.js';
import { diffTable } from './diff.js';

const VERS = `${T}/config-versions/`;
const CV = 'netbox_toolkit_plugin.configversion';
const CMD = 'netbox_toolkit_plugin.command';

/** versionBadge shows a version's status; a quarantined read warns. */
const versionBadge = (v) => statusBadge(v.status === 'quarantined' ? 'quarantined' : 'stored');

/** attribution says who changed a version: the FieldKit config executions, or nobody here. */
function attribution(v) {
  if (v.status !== 'stored') return h('span', { class: 'muted' }, v.reason);
  if (!v.previous_id) return h('span', { class: 'muted' }, 'first backup');
  const marks = [v.oscillating ? badge('oscillating', 'warn') : null, ' '];
  if (v.changed_outside) return h('span', {}, marks, badge('changed outside FieldKit', 'warn'));
  return h('span', {}, marks, v.changes.map((c, i) => [i ? '; ' : '', link(`/ui/logs/${c.command_log_id}`, c.username), ': ',
    h('code', {}, c.sent_command.split('\n').join(' ⏎ '))]));
}

/** configCard is a device page's configuration backups: the newest versions and a backup now. */
export function configCard(d) {
  if (!can(CV, 'view')) return null;
  const list = h('div', {}, loading());
  const load = async () => {
    try {
      const page = await get(`${VERS}${qs({ device_id: d.id, limit: 10, exclude: 'text' })}`);
      clear(list,
        page.results.length ? h('ul', { class: 'history config-versions' }, page.results.map((v) => h('li', {},
          versionBadge(v), ' ', link(`/ui/config-versions/${v.id}`, fmtTime(v.created)),
          v.status === 'stored' && v.previous_id ? [' ', h('span', { class: 'muted' }, `+${v.added} −${v.removed}`), ' ', link(`/ui/config-versions/${v.id}/diff?against=previous`, 'diff')] : null,
          h('div', { class: 'attribution' }, attribution(v))))) : h('p', { class: 'muted' }, 'Never backed up.'),
        page.count > 10 ? link(`/ui/config-versions/?device_id=${d.id}`, `All ${page.count} →`) : null);
    } catch (err) {
      clear(list, errorBox(err));
    }
  };
  load();
  return h('section', { class: 'card config-card', 'aria-labelledby': 'cfg-h' }, h('h2', { id: 'cfg-h' }, 'Configuration backups'),
    backupForm(d, load), list);
}

/** backupForm backs the device up now with one of the user's credential sets. */
function backupForm(d, done) {
  if (!can(CMD, 'execute_show') || !d.platform) return null;
  const sel = h('select', { 'aria-label': 'Credential set for the backup', class: 'backup-set' });
  const msg = h('div', { role: 'status' });
  listCredentialSets().then((sets) => {
    sets = sets.filter((s) => s.is_active && (!s.platforms.length || s.platforms.some((p) => p.id === d.platform.id)));
    clear(sel, sets.length ? sets.map((s) => h('option', { value: s.id }, `${s.name} (${s.username})`)) : h('option', { value: '' }, 'No credential set for this platform'));
  }, () => {});
  const btn = h('button', { type: 'button', class: 'btn small backup-now', onclick: async () => {
    btn.disabled = true;
    clear(msg, loading());
    try {
      const r = await post(`${VERS}collect/`, { device_ids: [d.id], credential_set_id: Number(sel.value) });
      const res = r.results[0];
      const words = { stored: 'a new version was kept', unchanged: 'the configuration is unchanged', quarantined: `the read was quarantined: ${res.reason}`, rejected: `not run: ${res.reason}` };
      clear(msg, notice(`Backup: ${words[res.status]}.`, res.status === 'stored' || res.status === 'unchanged' ? 'ok' : 'warn'));
      done();
    } catch (err) {
      clear(msg, errorBox(err));
    } finally {
      btn.disabled = false;
    }
  } }, 'Back up now');
  return h('div', { class: 'backup-form' }, sel, ' ', btn, msg);
}

async function versionView(main, { id }) {
  clear(main, loading());
  const v = await get(`${VERS}${id}/`);
  const rawBox = h('div', {});
  const showRaw = async () => {
    try {
      const r = await get(`${VERS}${id}/raw/`);
      clear(rawBox, h('section', { class: 'card' }, h('h2', {}, 'As read, secrets shown'), h('pre', { class: 'output raw-config' }, r.raw)));
    } catch (err) {
      clear(rawBox, errorBox(err));
    }
  };
  clear(main,
    pageHead(`Configuration of ${v.device.name}, ${v.status === 'stored' ? 'version' : 'quarantined read'} #${v.id}`,
      v.previous_id ? link(`/ui/config-versions/${v.id}/diff?against=previous`, 'Diff with previous', { class: 'btn' }) : null,
      v.status === 'stored' && can(CV, 'view_raw_config') ? h('button', { type: 'button', class: 'btn show-raw', onclick: showRaw }, 'Show secrets') : null),
    h('p', {}, v.device.id ? link(`/ui/devices/${v.device.id}`, `← ${v.device.name}`) : null),
    h('section', { class: 'card' }, dl([
      ['Status', versionBadge(v)],
      ['Read', fmtTime(v.created)],
      v.status === 'stored' ? ['Last confirmed', fmtTime(v.confirmed)] : ['Reason', v.reason],
      ['Changed by', attribution(v)],
      v.oscillating && v.flipping ? ['Flipping lines', h('pre', { class: 'sent-command' }, [...v.flipping.removed.map((l) => `- ${l}`), ...v.flipping.added.map((l) => `+ ${l}`)].join('\n'))] : null,
      ['Lines', v.lines], ['Secrets masked', v.secrets],
      ['Transcript', v.command_log_id ? link(`/ui/logs/${v.command_log_id}`, `log #${v.command_log_id}`) : '—'],
    ])),
    rawBox,
    v.status === 'stored' ? h('section', { class: 'card' }, h('h2', {}, 'Configuration'), h('pre', { class: 'output config-text' }, v.text)) : null);
}

async function versionDiffView(main, { id }) {
  clear(main, loading());
  const against = new URLSearchParams(location.search).get('against') || 'previous';
  const d = await get(`${VERS}${id}/diff/${qs({ against })}`);
  const side = (s) => h('span', {}, `#${s.id} · `, fmtTime(s.created));
  clear(main,
    pageHead(`${d.to.device.name}: version #${d.to.id} against #${d.from.id}`),
    h('p', {}, link(`/ui/config-versions/${d.to.id}`, `← version #${d.to.id}`), ' · ', link(`/ui/config-versions/${d.from.id}`, `version #${d.from.id}`)),
    d.secrets_changed ? notice('Only masked secrets differ between these versions.', 'warn') : null,
    h('section', { class: 'card' }, h('h2', {}, 'Configuration'), diffTable(d.unified, side(d.from), side(d.to))));
}

async function lastGoodView(main) {
  clear(main, loading());
  const site = new URLSearchParams(location.search).get('site_id') || '';
  const [r, sites] = await Promise.all([get(`${VERS}last-good/${qs({ site_id: site })}`), get('/api/dcim/sites/?limit=1000&brief=true')]);
  const pick = h('select', { 'aria-label': 'Site', class: 'site-pick', onchange: () => navigate(`/ui/backups/${qs({ site_id: pick.value })}`) },
    h('option', { value: '' }, 'Every site'), sites.results.map((s) => h('option', { value: s.id, selected: String(s.id) === site }, s.name)));
  const counts = h('span', { class: 'muted' });
  const list = h('section', { class: 'card' });
  const show = (res) => {
    counts.textContent = `${res.count} devices, ${res.results.filter((x) => !x.last_good).length} never backed up`;
    clear(list, table([
      { label: 'Device', cell: (x) => link(`/ui/devices/${x.device.id}?tab=config`, x.device.name) },
      { label: 'Site', cell: (x) => x.site.name || '—' },
      { label: 'Last good backup', cell: (x) => (x.last_good ? h('span', {}, fmtAgo(x.last_good), ' ', link(`/ui/config-versions/${x.version_id}`, 'view')) : statusBadge('never', 'never backed up')) },
      { label: 'Last quarantined read', cell: (x) => (x.last_quarantined ? h('span', { title: x.last_quarantine_reason }, fmtAgo(x.last_quarantined), ': ', x.last_quarantine_reason) : '—') },
    ], res.results, 'No device here.', { stack: true }));
  };
  const siteName = site ? (sites.results.find((s) => String(s.id) === site) || {}).name : '';
  clear(main,
    pageHead('Last good backup'),
    h('p', {}, pick, ' ', counts),
    site && r.results.length ? siteBackup(siteName, r.results.map((x) => x.device.id),
      async () => show(await get(`${VERS}last-good/${qs({ site_id: site })}`))) : null,
    list);
  show(r);
}

/**
 * siteBackup backs up every device of a site now (collect/ with the site's devices, as
 * the user may see them), with one of the user's credential sets, says what came of it
 * and then shows the list again.
 */
function siteBackup(siteName, ids, done) {
  if (!can(CMD, 'execute_show')) return null;
  const sel = h('select', { 'aria-label': 'Credential set for the backups', class: 'backup-set' });
  const msg = h('div', { role: 'status', class: 'site-backup-result' });
  listCredentialSets().then((sets) => {
    sets = sets.filter((s) => s.is_active);
    clear(sel, sets.length ? sets.map((s) => h('option', { value: s.id }, `${s.name} (${s.username})`)) : h('option', { value: '' }, 'No active credential set'));
  }, () => {});
  const n = ids.length;
  const btn = h('button', { type: 'button', class: 'btn primary backup-site' }, `Back up all ${n} device${n === 1 ? '' : 's'} of ${siteName}`);
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    clear(msg, loading());
    try {
      const sum = { stored: 0, unchanged: 0, quarantined: 0, rejected: 0 };
      const trouble = [];
      // collect/ takes at most 1,000 devices a request.
      for (let i = 0; i < n; i += 1000) {
        const res = await post(`${VERS}collect/`, { device_ids: ids.slice(i, i + 1000), credential_set_id: Number(sel.value) });
        for (const x of res.results) {
          sum[x.status]++;
          if (x.status === 'quarantined' || x.status === 'rejected') trouble.push(x);
        }
      }
      clear(msg, notice(`Backup of ${n} device${n === 1 ? '' : 's'}: ${sum.stored} new version${sum.stored === 1 ? '' : 's'} kept, ${sum.unchanged} unchanged, ${sum.quarantined} quarantined, ${sum.rejected} not run.`,
        trouble.length ? 'warn' : 'ok'),
      trouble.length ? h('ul', { class: 'site-backup-trouble' }, trouble.map((x) => h('li', {}, h('strong', {}, x.device_name || `device ${x.device_id}`), `: ${x.status === 'rejected' ? 'not run' : 'quarantined'}: ${x.reason}`))) : null);
      await done();
    } catch (err) {
      clear(msg, errorBox(err, 'Not backed up'));
    } finally {
      btn.disabled = false;
    }
  });
  return h('div', { class: 'card backup-form site-backup' }, h('p', { class: 'muted' }, 'Read every device\'s configuration now, as a scheduled backup would.'),
    h('div', { class: 'actions' }, sel, btn), msg);
}

async function versionsView(main) {
  clear(main, loading());
  const q = new URLSearchParams(location.search);
  const text = q.get('q') || ''; const device = q.get('device_id') || '';
  const search = h('input', { type: 'search', name: 'q', value: text, placeholder: 'snmp-server community public', 'aria-label': 'Search the latest configurations' });
  const form = h('form', { class: 'config-search', onsubmit: (e) => { e.preventDefault(); navigate(`/ui/config-versions/${qs({ q: search.value })}`); } },
    search, ' ', h('button', { type: 'submit', class: 'btn' }, 'Search latest configurations'));
  if (text) {
    const r = await get(`${VERS}search/${qs({ q: text })}`);
    clear(main, pageHead('Config search'), form,
      h('section', { class: 'card' }, h('p', { class: 'muted' }, `${r.count} devices' latest configuration holds “${text}”.`),
        table([
          { label: 'Device', cell: (m) => (m.device.id ? link(`/ui/devices/${m.device.id}`, m.device.name) : m.device.name) },
          { label: 'Lines', cell: (m) => h('pre', { class: 'sent-command' }, m.lines.join('\n')) },
          { label: 'Version', cell: (m) => link(`/ui/config-versions/${m.version_id}`, `#${m.version_id}`) },
        ], r.results, 'No device\'s latest configuration holds this.', { stack: true })));
    return;
  }
  const page = await get(`${VERS}${qs({ device_id: device, exclude: 'text', limit: 100 })}`);
  clear(main, pageHead('Config versions'), form,
    h('section', { class: 'card' }, table([
      { label: '#', cell: (v) => link(`/ui/config-versions/${v.id}`, String(v.id)) },
      { label: 'Device', cell: (v) => (v.device.id ? link(`/ui/devices/${v.device.id}`, v.device.name) : v.device.name) },
      { label: 'Read', cell: (v) => fmtTime(v.created) },
      { label: 'Status', cell: versionBadge },
      { label: 'Changed by', cell: attribution },
    ], page.results, 'No backup yet.', { stack: true })));
}

export function registerConfigs() {
  route('/ui/backups', lastGoodView);
  route('/ui/config-versions', versionsView);
  route('/ui/config-versions/:id', versionView);
  route('/ui/config-versions/:id/diff', versionDiffView);
}
