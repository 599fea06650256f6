// dom.js: building elements without innerHTML (every server string lands in a text
// node), plus the small widgets every page shares: messages, dialogs, copy buttons,
// pagination and tables.

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

/** link is an in-app link; the router intercepts its clicks. */
export const link = (href, text, attrs = {}) => h('a', { href, ...attrs }, text);

export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (isNaN(d)) return iso;
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function fmtAgo(iso) {
  if (!iso) return 'never';
  const s = Math.round((Date.now() - new Date(iso)) / 1000);
  if (s < 60) return `${Math.max(s, 0)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return fmtTime(iso);
}

export function fmtSeconds(x) {
  if (x == null) return '—';
  return x < 1 ? `${Math.round(x * 1000)} ms` : `${x.toFixed(2)} s`;
}

export const badge = (text, kind = '') => h('span', { class: `badge ${kind}` }, text);
export const okBadge = (ok) => badge(ok ? 'success' : 'failed', ok ? 'ok' : 'bad');
export const spinner = () => h('span', { class: 'spinner', 'aria-hidden': 'true' });

/** errorBox shows an error (ApiError or any Error) where it happened. */
export function errorBox(err, title) {
  const msg = err && err.message ? err.message : String(err);
  const extra = [];
  if (err && err.status === 429) {
    const wait = err.retryAfter ?? err.body?.details?.retry_after_seconds;
    if (wait != null) extra.push(h('p', {}, `Try again in ${wait} s.`));
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
 * table renders rows with columns [{label, cell(row) → node|string, class, title(row)}].
 * stack: on narrow screens each row becomes a card of label/value lines instead of
 * scrolling. head: extra content for a header cell (a sort button) by column.
 */
export function table(columns, rows, empty = 'Nothing here yet.', { stack = false, head } = {}) {
  if (!rows.length) return typeof empty === 'string' ? h('p', { class: 'empty' }, empty) : empty;
  const t = h('table', {},
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.class, 'aria-sort': c.ariaSort }, head ? head(c) : c.label)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, columns.map((c) => h('td', { class: c.class, 'data-label': c.label, title: c.title ? c.title(r) : undefined }, c.cell(r)))))));
  return scrollBox(t, stack ? 'stack' : '');
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
