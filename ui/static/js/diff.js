// diff.js: what changed. A side-by-side view of a unified diff with the changed words
// of each changed line marked, the parsed records a diff adds, removes and changes,
// and a command's history on a device with a mark on each run whose output changed.

import { h, clear, link, outcomeBadge, loading, pageHead, fmtTime, table, scrollBox, badge } from './dom.js';
import { get, T, qs } from './api.js';
import { route } from './router.js';

const LOGS = `${T}/command-logs/`;

/**
 * sideBySide reads a unified diff into rows [{left, right, kind}]: context on both
 * sides, a run of removed lines paired with the run of added lines after it, line by
 * line, the longer run's extra lines alone. Each side is {n, text} or null.
 */
export function sideBySide(unified) {
  const rows = [];
  let ln = 0; let rn = 0; let dels = []; let adds = [];
  const flush = () => {
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
      const l = dels[i] || null; const r = adds[i] || null;
      rows.push({ left: l, right: r, kind: l && r ? 'changed' : l ? 'removed' : 'added' });
    }
    dels = []; adds = [];
  };
  for (const line of unified.split('\n')) {
    if (line.startsWith('---') || line.startsWith('+++') || line === '') continue;
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) { flush(); ln = +hunk[1]; rn = +hunk[2]; rows.push({ kind: 'hunk', text: line }); continue; }
    const text = line.slice(1);
    if (line[0] === '-') dels.push({ n: ln++, text });
    else if (line[0] === '+') adds.push({ n: rn++, text });
    else { flush(); rows.push({ left: { n: ln++, text }, right: { n: rn++, text }, kind: 'same' }); }
  }
  flush();
  return rows;
}

/** tokens splits a line into words, runs of space and single punctuation marks. */
const tokens = (s) => s.match(/\s+|[\w.:/-]+|[^\w\s]/g) || [];

/** same: tokens match, any run of space matching any other (column padding is no change). */
const same = (p, q) => p === q || (p.trim() === '' && q.trim() === '');

/**
 * wordMarks compares two lines word by word (a longest common subsequence of their
 * tokens) and returns, for each side, [text, changed] pieces. Lines of more than 400
 * tokens are marked whole: the table would cost more than the mark is worth.
 */
export function wordMarks(a, b) {
  const x = tokens(a); const y = tokens(b);
  if (x.length * y.length > 160000) return [[[a, true]], [[b, true]]];
  const n = x.length; const m = y.length;
  const L = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = same(x[i], y[j]) ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const left = []; const right = [];
  const push = (out, t, changed) => {
    const last = out[out.length - 1];
    if (last && last[1] === changed) last[0] += t; else out.push([t, changed]);
  };
  let i = 0; let j = 0;
  while (i < n && j < m) {
    if (same(x[i], y[j])) { push(left, x[i++], false); push(right, y[j++], false); }
    else if (L[i + 1][j] >= L[i][j + 1]) push(left, x[i++], true);
    else push(right, y[j++], true);
  }
  while (i < n) push(left, x[i++], true);
  while (j < m) push(right, y[j++], true);
  return [left, right];
}

const pieces = (parts, cls) => parts.map(([t, changed]) => (changed && t.trim() ? h('mark', { class: cls }, t) : t));

/** diffTable renders a unified diff side by side, changed words marked. */
export function diffTable(unified, fromLabel, toLabel) {
  if (!unified) return h('p', { class: 'empty' }, 'The two outputs are the same.');
  const body = sideBySide(unified).map((r) => {
    if (r.kind === 'hunk') return h('tr', { class: 'hunk' }, h('td', { colspan: 4 }, r.text));
    let left = r.left ? r.left.text : ''; let right = r.right ? r.right.text : '';
    if (r.kind === 'changed') {
      const [l, rr] = wordMarks(left, right);
      left = pieces(l, 'del'); right = pieces(rr, 'ins');
    }
    return h('tr', { class: r.kind },
      h('td', { class: 'ln' }, r.left ? String(r.left.n) : ''), h('td', { class: `code ${r.left && r.kind !== 'same' ? 'del' : ''}` }, left),
      h('td', { class: 'ln' }, r.right ? String(r.right.n) : ''), h('td', { class: `code ${r.right && r.kind !== 'same' ? 'ins' : ''}` }, right));
  });
  return scrollBox(h('table', { class: 'diff' },
    h('thead', {}, h('tr', {}, h('th', { colspan: 2, scope: 'col' }, fromLabel), h('th', { colspan: 2, scope: 'col' }, toLabel))),
    h('tbody', {}, body)));
}

/** recordsCard lists the records a diff adds, removes and changes. */
function recordsCard(rec) {
  if (!rec) return null;
  const cols = (rows) => [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v) => (Array.isArray(v) ? v.join(', ') : v == null ? '' : String(v));
  const part = (title, rows, kind) => (rows.length ? [h('h3', {}, `${title} (${rows.length})`),
    table(cols(rows).map((c) => ({ label: c, cell: (r) => cell(r[c]) })), rows, '', { stack: true }), null] : null);
  const changed = rec.changed.map((c) => ({ ...c.key, ...Object.fromEntries(Object.keys(c.to).filter((k) => !(k in c.key) && cell(c.from[k]) !== cell(c.to[k])).map((k) => [k, `${cell(c.from[k])} → ${cell(c.to[k])}`])) }));
  const none = !rec.added.length && !rec.removed.length && !rec.changed.length;
  return h('section', { class: 'card records-diff' }, h('h2', {}, 'Parsed records'),
    none ? h('p', { class: 'empty' }, 'The same records on both sides.') : null,
    part('Added', rec.added, 'ins'), part('Removed', rec.removed, 'del'), part('Changed', changed, ''));
}

const sideLabel = (s) => h('span', {}, `#${s.id} · ${s.device.name} · `, fmtTime(s.created));

async function logDiffView(main, { id }) {
  clear(main, loading());
  const against = new URLSearchParams(location.search).get('against') || 'previous';
  const d = await get(`${LOGS}${id}/diff/${qs({ against })}`);
  clear(main,
    pageHead(`Log #${d.to.id} compared with #${d.from.id}`),
    h('p', {}, link(`/ui/logs/${d.to.id}`, `← log #${d.to.id}`), ' · ', link(`/ui/logs/${d.from.id}`, `log #${d.from.id}`),
      d.to.device.id && d.to.command.id ? [' · ', link(`/ui/logs/history${qs({ device_id: d.to.device.id, command_id: d.to.command.id })}`, `history of ${d.to.command.name} on ${d.to.device.name}`)] : null),
    h('section', { class: 'card' }, h('h2', {}, 'Output'), diffTable(d.unified, sideLabel(d.from), sideLabel(d.to))),
    recordsCard(d.records));
}

async function historyView(main) {
  clear(main, loading());
  const q = new URLSearchParams(location.search);
  const device = q.get('device_id'); const command = q.get('command_id');
  const [hist, dev, cmd] = await Promise.all([
    get(`${LOGS}history/${qs({ device_id: device, command_id: command, limit: 100 })}`),
    get(`/api/dcim/devices/${device}/`).catch(() => null),
    get(`${T}/commands/${command}/`).catch(() => null),
  ]);
  const mark = (r) => (r.changed === true ? badge('changed', 'warn') : r.changed === false ? h('span', { class: 'muted' }, 'same') : '—');
  clear(main,
    pageHead(`${cmd ? cmd.name : `Command ${command}`} on ${dev ? dev.name : `device ${device}`}`),
    h('p', {}, dev ? link(`/ui/devices/${device}`, `← ${dev.name}`) : null),
    h('section', { class: 'card' }, h('h2', {}, 'Runs, newest first'),
      table([
        { label: '#', cell: (r) => link(`/ui/logs/${r.id}`, String(r.id)) },
        { label: 'When', cell: (r) => fmtTime(r.created) },
        { label: 'User', cell: (r) => r.username },
        { label: 'Result', cell: (r) => outcomeBadge(r) },
        { label: 'Output', cell: (r) => h('span', { class: 'change-mark' }, mark(r), r.changed ? [' ', link(`/ui/logs/${r.id}/diff?against=previous`, 'what changed')] : null) },
        { label: 'Notes', class: 'clamp', title: (r) => r.notes || undefined, cell: (r) => h('span', { class: 'log-notes' }, r.notes) },
      ], hist.results, 'This command has not run on this device yet.', { stack: true })));
}

export function registerDiff() {
  route('/ui/logs/history', historyView);
  route('/ui/logs/:id/diff', logDiffView);
}
