// logs.js: command logs (filtered list, detail with output and parsed data, one log's
// CSV) and the statistics page with its hand-drawn 24-hour chart.

import { h, add, clear, link, outcomeBadge, loading, pageHead, dl, fmtTime, fmtSeconds, table, errorBox, zoneLabel, refText } from './dom.js';
import { get, patch, T, qs, ApiError } from './api.js';
import { can, session } from './session.js';
import { route } from './router.js';
import { listPage, emptyState, filterParams } from './list.js';
import { parsedTable, outputBlock, syntaxBanner, failureBox, NOTES_MAX } from './device.js';
import { typeBadge } from './commands.js';

const LOGS = `${T}/command-logs/`;
const localToISO = (v) => (v ? new Date(v).toISOString() : '');

/** LOG_FILTERS are the log list's filters; the export of the list takes the same. */
const LOG_FILTERS = () => [
  { name: 'q', label: 'Search', help: 'names, output, error messages and notes' },
  // At a hub, the FieldKit site a log ran at.
  ...(session.hub ? [{ name: 'site_id', label: 'Site', type: 'ref', ref: { path: '/api/dcim/sites/' } }] : []),
  { name: 'device_id', label: 'Device', type: 'ref', ref: { path: '/api/dcim/devices/' } },
  { name: 'command_id', label: 'Command', type: 'ref', ref: { path: `${T}/commands/`, label: (c) => c.name } },
  { name: 'username', label: 'User' },
  { name: 'success', label: 'Result', type: 'select', options: [['true', 'success'], ['false', 'failed']] },
  { name: 'source', label: 'Source', type: 'select', options: Object.entries(SOURCES) },
  { name: 'schedule_id', label: 'Schedule', type: 'ref', ref: { path: `${T}/schedules/`, label: (x) => x.name } },
  { name: 'from', label: `From (${zoneLabel()})`, type: 'datetime', param: 'created__gte', toParam: localToISO },
  { name: 'to', label: `To (${zoneLabel()})`, type: 'datetime', param: 'created__lte', toParam: localToISO },
];

/**
 * exportLinks download every log the list's filters keep (not just the page shown), as
 * CSV or JSON; the server names each file by its filters and the time it was made.
 */
function exportLinks(filters) {
  const params = filterParams(filters);
  const a = (format) => h('a', { class: 'btn export', href: `${LOGS}export/${qs({ format, ...params })}`, download: '',
    title: `Every log these filters keep, as ${format.toUpperCase()} (without the outputs)` }, `Export ${format.toUpperCase()}`);
  return h('span', { class: 'actions' }, a('csv'), a('json'));
}

function listView(main) {
  const filters = LOG_FILTERS();
  // What matters comes first: the outcome, when (the link to the log), where and what.
  // On a phone each row is a card in this order; the rest follows.
  return listPage(main, {
    title: 'Command logs', path: LOGS, filters, stack: true,
    actions: [exportLinks(filters)],
    columns: [
      { sort: 'success', label: 'Result', cell: (l) => outcomeBadge(l) },
      { sort: 'created', label: `When (${zoneLabel()})`, cell: (l) => link(`/ui/logs/${l.id}`, fmtTime(l.created, { zone: false })) },
      // At a hub, under the device, the FieldKit site the log ran at (its device's): a
      // column of its own would not fit beside the error at 1366 px.
      { label: 'Device', cell: (l) => h('div', {}, l.device && l.device.id ? link(`/ui/devices/${l.device.id}`, l.device.name) : (l.device ? l.device.name : '—'),
        session.hub ? h('div', { class: 'muted log-site' }, refText(l.site)) : null) },
      { label: 'Command', cell: (l) => h('span', {}, l.command && l.command.id ? link(`/ui/commands/${l.command.id}`, l.command.name) : (l.command ? l.command.name : '—'), ' ', typeBadge(l.command_type)) },
      { sort: 'username', label: 'User', cell: (l) => l.username },
      { sort: 'execution_duration', label: 'Duration', class: 'minor', cell: (l) => fmtSeconds(l.execution_duration) },
      { label: 'Error', class: 'clamp', title: (l) => l.error_message || undefined, cell: (l) => h('span', {}, l.error_message || '') },
    ],
    empty: emptyState('No command logs yet. Every command run, from a device page or the API, leaves one here with its output.',
      link('/ui/devices/', 'Pick a device to run a command on', { class: 'btn primary' })),
  });
}

async function detailView(main, { id }) {
  clear(main, loading());
  const l = await get(`${LOGS}${id}/`);
  const csv = `${LOGS}export/${qs({ format: 'csv', include_output: 'true', id: l.id })}`;
  clear(main,
    pageHead(`Log #${l.id}: ${l.command ? l.command.name : ''} on ${l.device ? l.device.name : ''}`,
      l.success ? link(`/ui/logs/${l.id}/diff?against=previous`, 'Compare with previous', { class: 'btn' }) : null,
      h('a', { href: csv, class: 'btn', download: '' }, 'Download CSV')),
    h('p', {}, link('/ui/logs/', '← all logs'),
      l.device && l.device.id && l.command && l.command.id
        ? [' · ', link(`/ui/logs/history?device_id=${l.device.id}&command_id=${l.command.id}`, `history of ${l.command.name} on ${l.device.name}`)] : null),
    h('section', { class: 'card' }, dl([
      ['Result', outcomeBadge(l)],
      ['Command', l.command && l.command.id ? link(`/ui/commands/${l.command.id}`, l.command.name) : l.command?.name],
      ['Type', typeBadge(l.command_type)],
      ...(session.hub ? [['Site', refText(l.site)]] : []),
      ['Device', l.device && l.device.id ? link(`/ui/devices/${l.device.id}`, l.device.name) : l.device?.name],
      ['User', l.username],
      ['Source', [l.source ? SOURCES[l.source] || l.source : null, l.client_address].filter(Boolean).join(', ') || '—'],
      ['Schedule', l.schedule ? link(`/ui/schedules/${l.schedule.id}`, l.schedule.name) : '—'],
      ['Credential set', l.credential_set ? l.credential_set.name : '—'],
      ['Started', fmtTime(l.execution_time)],
      ['Logged', fmtTime(l.created)],
      ['Duration', fmtSeconds(l.execution_duration)],
    ])),
    notesCard(l),
    sentCard(l),
    syntaxBanner(l.syntax_error),
    !l.success && l.error_message && !(l.syntax_error && l.syntax_error.detected) ? failureBox(l.error_message, l.failure) : null,
    // Parsing is for a show command that ran: a failed run or a change says nothing there.
    l.parsed_output && (l.parsed_output.success || (l.success && l.command_type !== 'config'))
      ? h('section', { class: 'card' }, h('h2', {}, 'Parsed data'), parsedTable(l.parsed_output)) : null,
    h('section', { class: 'card' }, h('h2', {}, 'Output'), outputBlock(l.output)));
}

const LOG_TYPE = 'netbox_toolkit_plugin.commandlog';

/**
 * notesCard shows why the log's command was run, as its runner said. Its author, or a
 * user who may change logs, edits the notes in place (the server checks it and logs the
 * edit); nothing else of a log changes.
 */
function notesCard(l) {
  const mine = !!(session.user && l.user && l.user.id === session.user.id);
  const editable = mine || can(LOG_TYPE, 'change');
  if (!l.notes && !editable) return null;
  const box = h('section', { class: 'card notes-card', 'aria-labelledby': 'notes-h' });
  const view = (said) => {
    const edit = editable ? h('button', { type: 'button', class: 'btn small edit-notes' }, l.notes ? 'Edit notes' : 'Add notes') : null;
    clear(box, h('div', { class: 'page-head' }, h('h2', { id: 'notes-h' }, 'Notes'), edit),
      l.notes ? h('p', { class: 'log-notes' }, l.notes) : h('p', { class: 'muted' }, 'No notes: say why this ran, for whoever reads it later.'),
      said ? h('p', { class: 'msg info', role: 'status' }, said) : null);
    edit?.addEventListener('click', form);
  };
  const form = () => {
    const input = h('textarea', { id: 'log-notes', rows: 3, maxlength: NOTES_MAX, value: l.notes, 'aria-describedby': 'log-notes-err' });
    const err = h('div', { class: 'field-error', id: 'log-notes-err' });
    const save = h('button', { type: 'submit', class: 'btn primary' }, 'Save notes');
    const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
    const f = h('form', { class: 'form notes-form', novalidate: true },
      h('div', { class: 'field' }, h('label', { for: 'log-notes' }, 'Notes'), input,
        h('div', { class: 'help' }, `At most ${NOTES_MAX} characters. The edit is logged; the rest of the log stays as it ran.`), err),
      h('div', { class: 'actions' }, save, cancel));
    cancel.addEventListener('click', () => view());
    f.addEventListener('submit', async (e) => {
      e.preventDefault();
      clear(err);
      save.disabled = true;
      try {
        const got = await patch(`${LOGS}${l.id}/`, { notes: input.value.trim() });
        l.notes = got.notes;
        view('Notes saved.');
      } catch (ex) {
        save.disabled = false;
        if (ex instanceof ApiError && ex.status === 400 && ex.body && ex.body.notes) err.textContent = [].concat(ex.body.notes).join(' ');
        else f.before(errorBox(ex, 'Not saved'));
      }
    });
    clear(box, h('h2', { id: 'notes-h' }, 'Notes'), f);
    input.focus();
  };
  view();
  return box;
}

/** SOURCES names where an execution came from. */
const SOURCES = { api: 'API', bulk: 'API (bulk)', ui: 'web interface', schedule: 'schedule' };

/** sentCard shows exactly what went to the device and the value each variable took. */
function sentCard(l) {
  if (!l.sent_command && !l.variables) return null;
  const vars = Object.entries(l.variables || {});
  return h('section', { class: 'card', id: 'sent' }, h('h2', {}, 'Sent to the device'),
    l.sent_command ? h('pre', { class: 'sent-command' }, l.sent_command) : null,
    vars.length ? table([{ label: 'Variable', cell: ([k]) => h('code', {}, `<${k}>`) }, { label: 'Value', cell: ([, v]) => h('code', {}, v) }], vars, '') : null);
}

/**
 * chart draws successes and failures per hour over the last 24 hours as inline SVG,
 * width units wide (the box it is drawn for, so that its labels keep their size).
 */
export function chart(buckets, width = 720) {
  const W = Math.max(300, Math.round(width)), H = 220, padL = 36, padB = 28, padT = 12;
  const max = Math.max(1, ...buckets.map((b) => b.ok + b.bad + b.stopped));
  const step = niceStep(max);
  const top = Math.ceil(max / step) * step;
  const bw = (W - padL - 8) / buckets.length;
  const y = (v) => padT + (H - padT - padB) * (1 - v / top);
  const svg = h('svg:svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-labelledby': 'chart-title' },
    h('svg:title', { id: 'chart-title' }, `Executions per hour over the last 24 hours: ${buckets.reduce((a, b) => a + b.ok, 0)} successful, ${buckets.reduce((a, b) => a + b.bad, 0)} failed, ${buckets.reduce((a, b) => a + b.stopped, 0)} cancelled`));
  for (let v = 0; v <= top; v += step) {
    svg.append(h('svg:line', { x1: padL, x2: W - 4, y1: y(v), y2: y(v), class: 'grid' }),
      h('svg:text', { x: padL - 6, y: y(v) + 4, class: 'axis', 'text-anchor': 'end' }, String(v)));
  }
  buckets.forEach((b, i) => {
    const x = padL + i * bw + 2;
    const w = Math.max(1, bw - 4);
    const tip = `${b.label}: ${b.ok} successful, ${b.bad} failed, ${b.stopped} cancelled`;
    let base = 0;
    for (const [n, cls] of [[b.ok, 'bar-ok'], [b.bad, 'bar-bad'], [b.stopped, 'bar-cancelled']]) {
      if (n) svg.append(h('svg:rect', { x, y: y(base + n), width: w, height: y(base) - y(base + n), class: cls }, h('svg:title', {}, tip)));
      base += n;
    }
    if ((buckets.length - 1 - i) % (W < 480 ? 6 : 3) === 0) svg.append(h('svg:text', { x: x + w / 2, y: H - 8, class: 'axis', 'text-anchor': 'middle' }, b.label));
  });
  return svg;
}

function niceStep(max) {
  const raw = max / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  return Math.max(1, [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || 1);
}

/** bucket groups logs into 24 hourly buckets ending with the current hour. */
export function bucket(logs, now = new Date()) {
  const end = new Date(now);
  end.setMinutes(0, 0, 0);
  const buckets = [];
  for (let i = 23; i >= 0; i--) {
    const start = new Date(end.getTime() - i * 3600e3);
    buckets.push({ start: start.getTime(), label: `${String(start.getHours()).padStart(2, '0')}:00`, ok: 0, bad: 0, stopped: 0 });
  }
  const first = buckets[0].start;
  for (const l of logs) {
    const t = new Date(l.created).getTime();
    const i = Math.floor((t - first) / 3600e3);
    if (i < 0 || i > 23) continue;
    // The export has no failure's parts: a cancellation is known by FieldKit's own
    // sentence for it ("Cancelled by …", exec.Failure.Message).
    if (l.success) buckets[i].ok++;
    else if (/^Cancelled\b/.test(l.error_message || '')) buckets[i].stopped++;
    else buckets[i].bad++;
  }
  return buckets;
}

async function statsView(main) {
  clear(main, pageHead('Statistics'), loading());
  const since = new Date(Date.now() - 24 * 3600e3);
  const [stats, recent] = await Promise.all([
    get(`${LOGS}statistics/`),
    // The export streams just the fields the chart needs (no output), however many logs.
    get(`${LOGS}export/${qs({ format: 'json', created__gte: since.toISOString() })}`).catch((err) => ({ err })),
  ]);
  const card = (label, value, sub, kind = '') => h('div', { class: `stat ${kind}` }, h('div', { class: 'stat-label' }, label), h('div', { class: 'stat-value' }, value), sub ? h('div', { class: 'stat-sub' }, sub) : null);
  const d = stats.last_24h;
  const chartBox = h('section', { class: 'card' }, h('h2', {}, `Last 24 hours, per hour (${zoneLabel()})`));
  if (recent.err) chartBox.append(errorBox(recent.err));
  else {
    add(chartBox, chart(bucket(recent.results), main.clientWidth - 64),
      h('div', { class: 'legend' }, h('span', { class: 'key ok' }), ' successful ', h('span', { class: 'key bad' }), ' failed ', h('span', { class: 'key cancelled' }), ' cancelled'));
  }
  const maxTop = Math.max(1, ...stats.top_commands.map((c) => c.count));
  clear(main, pageHead('Statistics', link('/ui/logs/', 'Browse logs', { class: 'btn' })),
    h('div', { class: 'stats' },
      card('Total executions', String(stats.total_logs), 'all time, logs you may see'),
      card('Success rate', `${stats.success_rate}%`, null, stats.success_rate >= 90 ? 'ok' : stats.success_rate >= 70 ? 'warn' : 'bad'),
      card('Last 24 hours', String(d.total), `${d.successful} successful · ${d.failed} failed`),
      card('Failed, last 24 h', String(d.failed), null, d.failed ? 'bad' : 'ok')),
    chartBox,
    h('div', { class: 'two-col' },
      h('section', { class: 'card' }, h('h2', {}, 'Top commands'),
        stats.top_commands.length ? h('ol', { class: 'bars' }, stats.top_commands.map((c) => {
          const fill = h('span', { class: 'hbar-fill' });
          fill.style.width = `${Math.round((c.count / maxTop) * 100)}%`;
          return h('li', {}, h('span', { class: 'hbar-label' }, c.command_name), h('span', { class: 'hbar' }, fill), h('span', { class: 'hbar-n' }, String(c.count)));
        })) : emptyState('Nothing has run yet: the commands run most often show here.', link('/ui/devices/', 'Run a command from a device page'))),
      h('section', { class: 'card' }, h('h2', {}, 'Common errors'),
        table([{ label: 'Error', cell: (e) => h('code', { class: 'wrap' }, e.error) }, { label: 'Count', class: 'num', cell: (e) => String(e.count) }],
          stats.common_errors, 'No failures. ✓'))));
}

export function registerLogs() {
  route('/ui/logs', listView);
  route('/ui/logs/:id', detailView);
  route('/ui/statistics', statsView);
}
