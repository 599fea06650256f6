// services.js: service credential sets, the device logins schedules run with. They are
// nobody's own: every user holding the service action on credential sets manages them
// (within its constraints), nobody runs commands with them by hand, and they have no
// token. The form is a personal set's.

import { h, clear, link, statusBadge, loading, pageHead, fmtAgo, table, errorBox, confirmDialog, toast, notice } from './dom.js';
import { get, patch, post, del } from './api.js';
import { route, navigate } from './router.js';
import { buildForm } from './forms.js';
import { emptyState } from './list.js';
import { fields, clearFields } from './credentials.js';

const BASE = '/ui/api/service-credential-sets/';
const PAGE = '/ui/service-credentials/';

async function listView(main) {
  clear(main, pageHead('Service credential sets', link(`${PAGE}new`, 'New service set', { class: 'btn primary' })),
    h('p', { class: 'muted' }, 'Device logins for schedules: unattended work runs with one of these, never with a person\'s own set. '
      + 'Every holder of the service permission manages them; nobody runs commands with them by hand. Deleting or deactivating one pauses its schedules.'));
  const body = h('div', {}, loading());
  main.append(body);
  try {
    const sets = (await get(BASE)).results;
    clear(body, table([
      { label: 'Name', class: 'wrap', value: (s) => s.name.toLowerCase(), cell: (s) => link(`${PAGE}${s.id}/edit`, s.name) },
      { label: 'Username', cell: (s) => s.username },
      { label: 'Platforms', class: 'wrap', cell: (s) => (s.platforms.length ? s.platforms.map((p) => p.name).join(', ') : 'all') },
      { label: 'Status', value: (s) => (s.is_active ? 0 : 1), cell: (s) => statusBadge(s.is_active ? 'active' : 'inactive') },
      { label: 'Made by', cell: (s) => s.created_by || '—' },
      { label: 'Last used', value: (s) => s.last_used || '', cell: (s) => fmtAgo(s.last_used) },
      { label: 'Schedules', cell: (s) => link(`/ui/schedules/?credential_set_id=${s.id}`, 'schedules') },
      { label: 'Actions', class: 'actions-cell', cell: (s) => h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'btn small', onclick: () => act(main, () => patch(`${BASE}${s.id}/`, { is_active: !s.is_active }),
          `${s.name} ${s.is_active ? 'deactivated: its schedules pause' : 'activated'}`) }, s.is_active ? 'Deactivate' : 'Activate'),
        link(`${PAGE}${s.id}/edit`, 'Edit', { class: 'btn small' }),
        h('button', { type: 'button', class: 'btn small danger', onclick: () => remove(s, main) }, 'Delete')) },
    ], sets, emptyState('No service credential sets yet. A schedule needs one: the login it uses on the devices it runs on.',
      link(`${PAGE}new`, 'Create a service set', { class: 'btn primary' })), { stack: true }));
  } catch (err) {
    clear(body, errorBox(err));
  }
}

async function act(main, fn, okText) {
  try {
    await fn();
    toast(okText);
    await listView(main);
  } catch (err) {
    main.querySelector('.page-head').after(errorBox(err));
  }
}

async function remove(s, main) {
  const ok = await confirmDialog({ title: `Delete “${s.name}”?`,
    body: h('p', {}, 'Its stored secrets are erased and the schedules using it pause until they are given another set. This cannot be undone.'),
    confirm: 'Delete', danger: true });
  if (ok) await act(main, () => del(`${BASE}${s.id}/`), `Deleted ${s.name}`);
}

async function formView(main, { id }) {
  clear(main, loading());
  const s = id ? await get(`${BASE}${id}/`) : {};
  const own = fields.map((f) => (f.name === 'name' ? { ...f, help: 'unique among service sets, e.g. “nightly backups”' }
    : f.name === 'is_active' ? { ...f, label: 'Active (schedules may run with it)' } : f));
  const form = await buildForm({
    fields: id ? [...own, ...clearFields.filter((f) => s[`has_${f.secret}`])] : own,
    initial: s, isEdit: !!id, submitLabel: id ? 'Save' : 'Create service set', cancelHref: PAGE,
    collect: (v) => {
      if (id && v.private_key === '') delete v.private_key;
      for (const f of clearFields) {
        if (v[f.name]) v[f.secret] = '';
        delete v[f.name];
      }
    },
    onSubmit: async (v) => {
      if (id) await patch(`${BASE}${id}/`, v); else await post(BASE, v);
      toast(id ? 'Saved' : 'Service set created');
      navigate(PAGE);
    },
  });
  clear(main, pageHead(id ? `Edit service set: ${s.name}` : 'New service credential set'),
    id ? notice('Secrets are never shown. Leave a secret empty to keep it.', 'muted') : null,
    h('section', { class: 'card' }, form));
  form.elements.name.focus();
}

export function registerServices() {
  route('/ui/service-credentials', listView);
  route('/ui/service-credentials/new', (main) => formView(main, {}));
  route('/ui/service-credentials/:id/edit', formView);
}
