// list.js: the one list page. Filters and the page live in the URL query, so Back,
// reload and a pasted link show the same rows.

import { h, clear, pager, table, sortButton, errorBox, loading, pageHead, lowerFirst } from './dom.js';
import { get, qs, orderings, ApiError } from './api.js';
import { picker } from './picker.js';
import { query, setQuery } from './router.js';

export const PAGE = 25;

async function filterControl(f, value) {
  const id = `flt-${f.name}`;
  let ctl;
  if (f.type === 'ref') {
    // The chosen object is shown by its own label, fetched; the choices are searched.
    let current = null;
    if (value) current = await get(`${f.ref.path}${encodeURIComponent(value)}/`).catch(() => ({ id: value, display: `#${value}` }));
    ctl = picker({ name: f.name, id, ref: f.ref, value: current, empty: f.any || 'Any' });
  } else if (f.type === 'select') {
    ctl = h('select', { id, name: f.name },
      h('option', { value: '' }, f.any || 'Any'),
      (f.options || []).map(([v, l]) => h('option', { value: v, selected: String(v) === String(value ?? '') }, l)));
  } else {
    ctl = h('input', { id, name: f.name, type: f.type === 'datetime' ? 'datetime-local' : 'search', value: value ?? '', placeholder: f.placeholder || '' });
  }
  return h('div', { class: 'filter' }, h('label', { for: id }, f.label), ctl);
}

/**
 * filterParams are the API query parameters of the filters set in the page's query q:
 * what the list asks for, and what an export of the same rows asks for.
 */
export function filterParams(filters, q = query()) {
  const params = {};
  for (const f of filters) {
    if (!q[f.name]) continue;
    params[f.param || f.name] = f.toParam ? f.toParam(q[f.name]) : q[f.name];
  }
  return params;
}

/**
 * emptyState is what an empty list shows: what would fill it, and the way there (a link
 * when the user may add, else whom to ask).
 */
export function emptyState(text, action) {
  return h('div', { class: 'empty-state' }, h('p', {}, text), action || null);
}

/**
 * sortable gives the columns whose sort key the list accepts (the server names its
 * orderings) a state for aria-sort, and returns the header cell maker: a button that
 * sorts by the column, then the other way, then back to the list's own order.
 */
async function sortable(opts, q) {
  const accepted = await orderings(opts.path).catch(() => new Set());
  const current = q.ordering || '';
  const key = current.replace(/^-/, '');
  const desc = current.startsWith('-');
  const columns = opts.columns.map((c) => (c.sort && accepted.has(c.sort)
    ? { ...c, ariaSort: c.sort === key ? (desc ? 'descending' : 'ascending') : 'none' } : c));
  const next = (k) => (k !== key ? k : desc ? '' : `-${k}`);
  const head = (c) => (c.ariaSort ? sortButton(c.label, () => setQuery({ ...q, ordering: next(c.sort), offset: '' })) : c.label);
  return { columns, head };
}

/**
 * listPage renders a filtered, paginated list into main. opts: title, path (API list
 * URL), columns [{label, cell, sort (an ordering name), class}], filters [{name, label,
 * type, options|ref}], actions (nodes for the header), base (fixed query params), empty
 * (a node or text: what fills the list when it has nothing at all), limit, stack (rows
 * become cards on a narrow screen, the columns in their order). Filters, page and
 * ordering live in the URL.
 */
export async function listPage(main, opts) {
  const q = query();
  const limit = Number(q.limit) || opts.limit || PAGE;
  const offset = Number(q.offset) || 0;
  const filters = opts.filters || [];
  clear(main, pageHead(opts.title, opts.actions || []));
  if (opts.intro) main.append(opts.intro);
  // On a phone the filters fold behind one button, so that the rows come first.
  const active = filters.filter((f) => q[f.name]).length;
  const form = h('form', { class: 'filters folded', role: 'search', id: 'list-filters' });
  const fold = h('button', { type: 'button', class: 'btn small filter-fold', 'aria-controls': 'list-filters', 'aria-expanded': 'false', onclick: () => {
    const open = form.classList.toggle('folded') === false;
    fold.setAttribute('aria-expanded', String(open));
  } }, active ? `Filters (${active} active)` : 'Filters');
  form.append(fold);
  for (const f of filters) {
    const ctl = await filterControl(f, q[f.name]);
    if (ctl) form.append(ctl);
  }
  form.append(h('div', { class: 'filter filter-buttons' },
    h('button', { type: 'submit', class: 'btn primary' }, 'Filter'),
    active ? h('button', { type: 'button', class: 'btn', onclick: () => setQuery({ ordering: q.ordering }) }, 'Clear') : null));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const next = { ordering: q.ordering };
    for (const f of filters) if (form.elements[f.name]) next[f.name] = form.elements[f.name].value;
    setQuery(next);
  });
  if (filters.length) main.append(form);
  const body = h('div', { class: 'list-body', 'aria-live': 'polite' }, loading());
  main.append(body);
  const params = { ...(opts.base || {}), limit, offset, ordering: q.ordering, ...filterParams(filters, q) };
  const { columns, head } = await sortable(opts, q);
  try {
    const page = await get(opts.path + qs(params));
    const none = active
      ? emptyState(`No ${lowerFirst(opts.title)} match these filters.`, h('button', { type: 'button', class: 'btn', onclick: () => setQuery({ ordering: q.ordering }) }, 'Clear the filters'))
      : opts.empty || emptyState(`No ${lowerFirst(opts.title)} yet.`);
    clear(body,
      table(columns, page.results, none, { head, stack: opts.stack }),
      page.count > limit || offset > 0 ? pager(page.count, offset, limit, (o) => setQuery({ ...q, offset: o || '' }))
        : page.count ? h('p', { class: 'muted count' }, `${page.count} ${page.count === 1 ? 'item' : 'items'}`) : null);
    return page;
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) throw err;
    clear(body, errorBox(err));
    return null;
  }
}
