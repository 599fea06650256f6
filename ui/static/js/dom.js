// dom.js: building elements without innerHTML (every server string lands in a text
// node), plus the small widgets every page shares: messages, dialogs, copy buttons,
// pagination and tables.

import { session } from './session.js';

/**
 * h creates an element. attrs: class, on<event> handlers, boolean attributes (true/false),
 * anything else as an attribute; children: nodes, strings, numbers, arrays, null (skipped).
 */
export function h(tag, attrs, ...children) {
  const el = tag.startsWith('svg:')
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value' && 'value' in el && !tag.startsWith('svg:')) el.value = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** add appends children to el, skipping null and false (Element.append would print them). */
export function add(el, ...children) {
  append(el, children);
  return el;
}

/** clear empties el and appends children. */
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** lowerFirst lower-cases a title for use inside a sentence, leaving acronyms (IP, VLANs, API) alone. */
export const lowerFirst = (t) => (/^[A-Z][a-z]/.test(t) ? t[0].toLowerCase() + t.slice(1) : t);

/** link is an in-app link; the router intercepts its clicks. */
export const link = (href, text, attrs = {}) => h('a', { href, ...attrs }, text);

const stampFormats = new Map();

/** stampIn writes a date as "YYYY-MM-DD HH:MM:SS" in an IANA zone (undefined: the browser's). */
function stampIn(d, zone) {
  const key = zone || '';
  if (!stampFormats.has(key)) {
    stampFormats.set(key, new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit',
      hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' }));
  }
  const p = Object.fromEntries(stampFormats.get(key).formatToParts(d).map((x) => [x.type, x.value]));
  return { text: `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`, zone: p.timeZoneName || '' };
}

/** browserZone is the IANA name of the zone this browser shows times in. */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** zoneLabel is the short name of the browser's zone at d (CET, GMT+1, UTC). */
export const zoneLabel = (d = new Date()) => stampIn(d, undefined).zone;

/**
 * timeTitle is what a time says on hover: the instant in UTC and, when the server's zone
 * (server.time_zone: schedules, export days) differs, in that zone too.
 */
function timeTitle(d) {
  const lines = [`${stampIn(d, 'UTC').text} UTC`];
  const server = session.timeZone;
  if (server && server !== 'UTC' && server !== browserZone()) {
    try { lines.push(`${stampIn(d, server).text} ${server} (the server's zone)`); } catch { /* an unknown zone: UTC says enough */ }
  }
  return lines.join('\n');
}

/**
 * fmtTime shows a time in the browser's zone, with the zone's name (zone: false leaves
 * it to a column's header), UTC on hover.
 */
export function fmtTime(iso, { zone = true } = {}) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (isNaN(d)) return iso;
  const local = stampIn(d, undefined);
  return zone ? h('time', { datetime: d.toISOString(), title: timeTitle(d) }, `${local.text} ${local.zone}`)
    : h('time', { datetime: d.toISOString(), title: `${local.text} ${local.zone}\n${timeTitle(d)}` }, local.text);
}

/** clockTime is the time of day of d in the browser's zone, with the zone: "17:05:12 CET". */
export function clockTime(d) {
  const local = stampIn(d, undefined);
  return `${local.text.slice(11)} ${local.zone}`;
}

/** fmtAgo shows how long ago a time was, the time itself (with its zone) on hover. */
export function fmtAgo(iso) {
  if (!iso) return 'never';
  const d = new Date(iso);
  if (isNaN(d)) return iso;
  const s = Math.round((Date.now() - d) / 1000);
  if (s >= 86400) return fmtTime(iso);
  const text = s < 60 ? `${Math.max(s, 0)} s ago` : s < 3600 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
  const local = stampIn(d, undefined);
  return h('time', { datetime: d.toISOString(), title: `${local.text} ${local.zone}\n${timeTitle(d)}` }, text);
}

export function fmtSeconds(x) {
  if (x == null) return '—';
  return x < 1 ? `${Math.round(x * 1000)} ms` : `${x.toFixed(2)} s`;
}

export const badge = (text, kind = '') => h('span', { class: `badge ${kind}` }, text);

/**
 * statusKinds is the one place a status word gets its colour (a class of .badge, .result-head,
 * .key): a device's or an address's status, a run's outcome, a schedule run's, a webhook
 * delivery's, a hub site's, the hub link's, a backup's. Green is well, red failed, amber needs
 * a look; cancelled (and skipped) is nobody's failure: grey, neither green nor red. A word not
 * listed (planned, reserved, pending…) is plain grey.
 */
const statusKinds = {
  active: 'ok', success: 'ok', completed: 'ok', delivered: 'ok', online: 'ok', ok: 'ok', stored: 'ok',
  failed: 'bad', errored: 'bad', offline: 'bad', revoked: 'bad', stale: 'bad', never: 'bad', quarantined: 'bad',
  starting: 'warn', unreachable: 'warn', busy: 'warn', refused: 'warn', upgrade_required: 'warn', superseded: 'warn',
  cancelled: 'cancelled', skipped: 'cancelled',
};

/** statusKind is the colour class of a status word ({value, label} or a bare value); '' for plain grey. */
export function statusKind(s) {
  const v = s && typeof s === 'object' ? s.value : s;
  return Object.hasOwn(statusKinds, v) ? statusKinds[v] : '';
}

export const okBadge = (ok) => statusBadge(ok ? 'success' : 'failed');

/**
 * cancelled reports whether a run (a log, execute's answer) was stopped by a person (or
 * by the server stopping) rather than failing: its failure's reason is "cancelled".
 */
export const cancelled = (run) => !!(run && !run.success && (run.cancelled === true || (run.failure && run.failure.reason === 'cancelled')));

/** outcome is a run's outcome word: success, failed, or cancelled, which is nobody's failure. */
export const outcome = (run) => (run.success ? 'success' : cancelled(run) ? 'cancelled' : 'failed');

/** outcomeBadge is a run's outcome as a badge. */
export const outcomeBadge = (run) => statusBadge(outcome(run));

/**
 * statusBadge is a status ({value, label} or a bare value) in its colour (statusKinds); text,
 * when given, is shown instead of the label ("never backed up" for never).
 */
export function statusBadge(s, text) {
  const v = s && typeof s === 'object' ? s.value : s;
  if (!v) return '—';
  return badge(text || s.label || v, statusKind(v));
}
export const spinner = () => h('span', { class: 'spinner', 'aria-hidden': 'true' });

/** errorBox shows an error (ApiError or any Error) where it happened. */
export function errorBox(err, title) {
  const msg = err && err.message ? err.message : String(err);
  const extra = [];
  if (err && err.status === 429) {
    const wait = err.retryAfter ?? err.body?.details?.retry_after_seconds;
    // The login throttle's message already says how long to wait; say it once.
    if (wait != null && !/try again in/i.test(msg)) extra.push(h('p', {}, `Try again in ${wait} s.`));
  }
  return h('div', { class: 'msg error', role: 'alert' },
    h('strong', {}, title || (err && err.status === 403 ? 'Not allowed' : 'Error')), ' ', msg, extra);
}

export const notice = (text, kind = 'info') => h('div', { class: `msg ${kind}`, role: 'status' }, text);

/** toast shows a short confirmation in the corner. */
export function toast(text, kind = 'ok') {
  const box = document.getElementById('toasts');
  const t = h('div', { class: `toast ${kind}`, role: 'status' }, text);
  box.append(t);
  setTimeout(() => t.remove(), 3500);
}

/** loading is a placeholder while a page fetches. */
export const loading = () => h('p', { class: 'loading' }, spinner(), ' Loading…');

/** copyText copies to the clipboard; the fallback covers plain-HTTP sites (no secure context). */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try { await navigator.clipboard.writeText(text); return true; } catch { /* fall back */ }
  }
  const ta = h('textarea', { class: 'offscreen', readonly: true });
  ta.value = text;
  document.body.append(ta);
  ta.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch { ok = false; }
  ta.remove();
  return ok;
}

export function copyButton(getText, label = 'Copy') {
  const b = h('button', { type: 'button', class: 'btn small' }, label);
  b.addEventListener('click', async () => {
    const ok = await copyText(getText());
    b.textContent = ok ? 'Copied' : 'Copy failed: select and copy by hand';
    setTimeout(() => { b.textContent = label; }, 2000);
  });
  return b;
}

/**
 * confirmDialog asks a yes/no question in a modal <dialog> (Esc cancels) and resolves
 * to true only on the confirm button.
 */
export function confirmDialog({ title, body, confirm = 'Confirm', danger = false }) {
  return new Promise((resolve) => {
    const dlg = h('dialog', { class: 'dialog', 'aria-labelledby': 'dlg-title' },
      h('form', { method: 'dialog' },
        h('h2', { id: 'dlg-title' }, title),
        h('div', { class: 'dialog-body' }, body),
        h('div', { class: 'actions' },
          h('button', { value: 'cancel', class: 'btn', autofocus: true }, 'Cancel'),
          h('button', { value: 'ok', class: danger ? 'btn danger' : 'btn primary' }, confirm))));
    dlg.addEventListener('close', () => { resolve(dlg.returnValue === 'ok'); dlg.remove(); });
    document.body.append(dlg);
    dlg.showModal();
  });
}

/** pager renders "1–25 of 62" and previous/next buttons; go(offset) moves. */
export function pager(count, offset, limit, go) {
  const from = count ? offset + 1 : 0;
  const to = Math.min(offset + limit, count);
  const pages = Math.max(1, Math.ceil(count / limit));
  const page = Math.floor(offset / limit) + 1;
  return h('nav', { class: 'pager', 'aria-label': 'Pagination' },
    h('span', {}, `${from}–${to} of ${count}`),
    h('button', { type: 'button', class: 'btn small', disabled: offset <= 0, onclick: () => go(0) }, '« First'),
    h('button', { type: 'button', class: 'btn small', disabled: offset <= 0, onclick: () => go(Math.max(0, offset - limit)) }, '‹ Previous'),
    h('span', { class: 'muted' }, `page ${page} of ${pages}`),
    h('button', { type: 'button', class: 'btn small', disabled: to >= count, onclick: () => go(offset + limit) }, 'Next ›'),
    h('button', { type: 'button', class: 'btn small', disabled: to >= count, onclick: () => go((pages - 1) * limit) }, 'Last »'));
}

/**
 * table renders rows with columns [{label, cell(row) → node|string, class, title(row),
 * value(row)}]. stack: on narrow screens each row becomes a card of label/value lines
 * instead of scrolling. head: the content of a column's header cell (a sort button that
 * asks the server). Columns with a value, in a table without head, sort here in the
 * page (a list that is never paginated).
 */
export function table(columns, rows, empty = 'Nothing here yet.', { stack = false, head } = {}) {
  if (!rows.length) return typeof empty === 'string' ? h('p', { class: 'empty' }, empty) : empty;
  const tbody = h('tbody');
  const fill = (list) => clear(tbody, list.map((r) => h('tr', {}, columns.map((c) => h('td', { class: c.class, 'data-label': c.label, title: c.title ? c.title(r) : undefined }, c.cell(r))))));
  fill(rows);
  const ths = columns.map((c) => h('th', { scope: 'col', class: c.class, 'aria-sort': c.ariaSort || (!head && c.value ? 'none' : undefined) }));
  columns.forEach((c, i) => {
    if (head) add(ths[i], head(c));
    else if (c.value) add(ths[i], sortButton(c.label, () => localSort(i)));
    else add(ths[i], c.label);
  });
  function localSort(i) {
    const c = columns[i];
    const dir = ths[i].getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    ths.forEach((th, j) => { if (columns[j].value) th.setAttribute('aria-sort', 'none'); });
    ths[i].setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
    const key = (r) => { const v = c.value(r); return v == null ? '' : v; };
    fill([...rows].sort((a, b) => dir * (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)));
  }
  const t = h('table', {}, h('thead', {}, h('tr', {}, ths)), tbody);
  return scrollBox(t, stack ? 'stack' : '');
}

/** sortButton is a column header that sorts; its mark follows the th's aria-sort. */
export function sortButton(label, onclick) {
  return h('button', { type: 'button', class: 'sort', title: `Sort by ${lowerFirst(label)}`, onclick },
    label, h('span', { class: 'sort-mark', 'aria-hidden': 'true' }));
}

/**
 * scrollBox puts wide content (a table) in a box that scrolls sideways inside the page,
 * never making the page wider than the window. While the content is wider than the box,
 * a line above it says so and the edges fade where more is hidden.
 */
export function scrollBox(content, cls = '') {
  const wrap = h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Table, scrolls sideways' }, content);
  const box = h('div', { class: `scroll-box ${cls}`.trim() },
    h('p', { class: 'scroll-hint', 'aria-hidden': 'true' }, 'Scroll sideways for more ⇆'),
    h('div', { class: 'scroll-frame' }, wrap));
  const update = () => {
    const over = wrap.scrollWidth > wrap.clientWidth + 1;
    box.classList.toggle('overflowing', over);
    box.classList.toggle('more-left', over && wrap.scrollLeft > 1);
    box.classList.toggle('more-right', over && wrap.scrollLeft + wrap.clientWidth < wrap.scrollWidth - 1);
  };
  wrap.addEventListener('scroll', update, { passive: true });
  const ro = new ResizeObserver(update);
  ro.observe(wrap);
  ro.observe(content);
  return box;
}

/** dl renders a definition list from [label, value] pairs. */
export function dl(pairs) {
  return h('dl', { class: 'props' }, pairs.filter(Boolean).map(([k, v]) =>
    [h('dt', {}, k), h('dd', {}, v === '' || v == null ? '—' : v)]));
}

/** refText shows a nested reference ({display|name}) or a dash. */
export function refText(r) {
  if (r == null) return '—';
  if (typeof r !== 'object') return String(r);
  return r.display || r.name || r.username || r.address || String(r.id);
}

export function pageHead(title, ...actions) {
  document.title = `${title} · FieldKit`;
  return h('div', { class: 'page-head' }, h('h1', {}, title), h('div', { class: 'actions' }, actions));
}
