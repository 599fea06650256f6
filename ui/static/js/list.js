// list.js: the one list page. Filters and the page live in the URL query, so Back,
// reload and a pasted link show the same rows.

import { h, clear, pager, table, errorBox, loading, pageHead } from './dom.js';
import { get, qs } from './api.js';
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
 * listPage renders a filtered, paginated list into main. opts: title, path (API list
 * URL), columns, filters [{name, label, type, options|ref}], actions (nodes for the
 * header), base (fixed query params), empty (text), limit.
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
  for (const f of filters) form.append(await filterControl(f, q[f.name]));
  form.append(h('div', { class: 'filter filter-buttons' },
    h('button', { type: 'submit', class: 'btn primary' }, 'Filter'),
    active ? h('button', { type: 'button', class: 'btn', onclick: () => setQuery({}) }, 'Clear') : null));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const next = {};
    for (const f of filters) next[f.name] = form.elements[f.name].value;
    setQuery(next);
  });
  if (filters.length) main.append(form);
  const body = h('div', { class: 'list-body', 'aria-live': 'polite' }, loading());
  main.append(body);
  const params = { ...(opts.base || {}), limit, offset };
  for (const f of filters) {
    if (!q[f.name]) continue;
    params[f.param || f.name] = f.toParam ? f.toParam(q[f.name]) : q[f.name];
  }
  try {
    const page = await get(opts.path + qs(params));
    clear(body,
      table(opts.columns, page.results, opts.empty),
      page.count > limit || offset > 0 ? pager(page.count, offset, limit, (o) => setQuery({ ...q, offset: o || '' })) : h('p', { class: 'muted count' }, `${page.count} ${page.count === 1 ? 'item' : 'items'}`));
    return page;
  } catch (err) {
    clear(body, errorBox(err));
    return null;
  }
}
