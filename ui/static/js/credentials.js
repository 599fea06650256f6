// credentials.js: the user's credential sets (web-only endpoints). A token is shown
// once, right after create or regenerate; this tab also keeps it in memory (never in
// storage) so the device runner can use it until the page is reloaded.

import { h, clear, link, statusBadge, loading, pageHead, fmtAgo, table, errorBox, confirmDialog, toast, copyButton, notice } from './dom.js';
import { get, post, patch, del } from './api.js';
import { route, navigate } from './router.js';
import { buildForm } from './forms.js';
import { emptyState } from './list.js';

const BASE = '/ui/api/credential-sets/';

/** pending is a token to show once on the next render of the list. */
let pending = null;

export async function listCredentialSets() {
  const r = await get(BASE);
  return r.results;
}

function tokenPanel(set, token) {
  return h('section', { class: 'card secret-once', role: 'alert', 'aria-labelledby': 'tok-h' },
    h('h2', { id: 'tok-h' }, `Token for “${set.name}”`),
    h('p', {}, h('strong', {}, 'Copy it now: you will not see this token again.'),
      ' FieldKit keeps only a hash. Scripts and the API use it as ', h('code', {}, 'credential_token'), '; this browser tab remembers it until you reload.'),
    h('div', { class: 'secret-row' }, h('code', { class: 'secret', id: 'new-token' }, token), copyButton(() => token, 'Copy token')),
    h('button', { type: 'button', class: 'btn', onclick: (e) => e.target.closest('section').remove() }, 'I have copied it'));
}

export const fields = [
  { name: 'name', label: 'Name', required: true, help: 'unique among your sets, e.g. “site switches”' },
  { name: 'description', label: 'Description' },
  { name: 'username', label: 'Device username', required: true, autocomplete: 'off' },
  { name: 'password', label: 'Device password', type: 'password', help: 'stored encrypted', editHelp: 'leave empty to keep the stored password' },
  { name: 'enable_secret', label: 'Enable secret', type: 'password', help: 'for Cisco-style enable; optional', editHelp: 'leave empty to keep it' },
  { name: 'enable_mode', label: 'Enable password', type: 'select', noEmpty: true, help: 'what is typed when enable asks for a password',
    options: [['', 'the enable secret, or the login password when none is stored'], ['secret', 'the enable secret'],
      ['password', 'the login password'], ['none', 'nothing: the device asks but has no enable password']] },
  { name: 'private_key', label: 'SSH private key', type: 'textarea', mono: true, rows: 4, placeholder: '-----BEGIN OPENSSH PRIVATE KEY-----', help: 'optional', editHelp: 'leave empty to keep the stored key' },
  { name: 'platforms', label: 'Platforms', type: 'refs', ref: { path: '/api/dcim/platforms/' }, help: 'none ticked = every platform' },
  { name: 'is_active', label: 'Active (its token may run commands)', type: 'bool', default: true },
];

// On edit, an empty secret keeps the stored one; these boxes clear it instead.
export const clearFields = [
  { name: 'clear_enable_secret', label: 'Remove the stored enable secret', type: 'bool', secret: 'enable_secret' },
  { name: 'clear_private_key', label: 'Remove the stored SSH private key', type: 'bool', secret: 'private_key' },
];

async function listView(main) {
  clear(main, pageHead('Credential sets', link('/ui/credentials/new', 'New credential set', { class: 'btn primary' })),
    h('p', { class: 'muted' }, 'Your device logins. Only you can use your sets, only while active, only on their platforms. Secrets are never shown again after saving.'));
  if (pending) { main.append(tokenPanel(pending.set, pending.token)); pending = null; }
  const body = h('div', {}, loading());
  main.append(body);
  try {
    const sets = await listCredentialSets();
    clear(body, table([
      { label: 'Name', class: 'wrap-some', value: (s) => s.name.toLowerCase(), cell: (s) => link(`/ui/credentials/${s.id}/edit`, s.name) },
      { label: 'Username', value: (s) => s.username.toLowerCase(), cell: (s) => s.username },
      { label: 'Platforms', class: 'wrap-some', cell: (s) => (s.platforms.length ? s.platforms.map((p) => p.name).join(', ') : 'all') },
      { label: 'Status', value: (s) => (s.is_active ? 0 : 1), cell: (s) => statusBadge(s.is_active ? 'active' : 'inactive') },
      { label: 'Secrets', class: 'wrap-some', cell: (s) => [s.has_password ? 'password' : null, s.has_enable_secret ? 'enable' : null, s.has_private_key ? 'key' : null].filter(Boolean).join(', ') || '—' },
      { label: 'Token', cell: (s) => h('code', {}, `${s.token_prefix}…`) },
      { label: 'Last used', value: (s) => s.last_used || '', cell: (s) => fmtAgo(s.last_used) },
      { label: 'Actions', class: 'actions-cell', cell: (s) => h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'btn small', onclick: () => toggle(s, main) }, s.is_active ? 'Deactivate' : 'Activate'),
        h('button', { type: 'button', class: 'btn small', onclick: () => regenerate(s, main) }, 'Regenerate token'),
        link(`/ui/credentials/${s.id}/edit`, 'Edit', { class: 'btn small' }),
        h('button', { type: 'button', class: 'btn small danger', onclick: () => remove(s, main) }, 'Delete')) },
    ], sets, emptyState('No credential sets yet. A set holds your login to devices (username, password or key, enable secret); you need one to run commands.',
      link('/ui/credentials/new', 'Create a credential set', { class: 'btn primary' })), { stack: true }),
    h('p', { class: 'muted count' }, `${sets.length} ${sets.length === 1 ? 'set' : 'sets'}`));
  } catch (err) {
    clear(body, errorBox(err));
  }
}

async function act(main, fn, okText) {
  try {
    await fn();
    if (okText) toast(okText);
    await listView(main);
  } catch (err) {
    main.querySelector('.page-head').after(errorBox(err));
  }
}

function toggle(s, main) {
  return act(main, () => patch(`${BASE}${s.id}/`, { is_active: !s.is_active }), `${s.name} ${s.is_active ? 'deactivated' : 'activated'}`);
}

async function regenerate(s, main) {
  const ok = await confirmDialog({
    title: `Regenerate the token of “${s.name}”?`,
    body: h('p', {}, 'The current token stops working at once: every script or saved request using it will fail until you give it the new one.'),
    confirm: 'Regenerate token', danger: true,
  });
  if (!ok) return;
  await act(main, async () => {
    const r = await post(`${BASE}${s.id}/regenerate/`, {});
    pending = { set: s, token: r.token };
  }, 'New token generated');
}

async function remove(s, main) {
  const ok = await confirmDialog({ title: `Delete “${s.name}”?`, body: h('p', {}, 'Its token stops working and its stored secrets are erased. This cannot be undone.'), confirm: 'Delete', danger: true });
  if (!ok) return;
  await act(main, () => del(`${BASE}${s.id}/`), `Deleted ${s.name}`);
}

async function formView(main, { id }) {
  clear(main, loading());
  const s = id ? await get(`${BASE}${id}/`) : {};
  const form = await buildForm({
    fields: id ? [...fields, ...clearFields.filter((f) => s[`has_${f.secret}`])] : fields.map((f) => (f.name === 'password' ? { ...f, help: 'stored encrypted; needed unless you use a key' } : f)),
    initial: s, isEdit: !!id, submitLabel: id ? 'Save' : 'Create credential set', cancelHref: '/ui/credentials/',
    collect: (v) => {
      if (id && v.private_key === '') delete v.private_key;
      for (const f of clearFields) {
        if (v[f.name]) v[f.secret] = '';
        delete v[f.name];
      }
    },
    onSubmit: async (v) => {
      if (id) {
        await patch(`${BASE}${id}/`, v);
        toast('Saved');
      } else {
        const created = await post(BASE, v);
        pending = { set: created, token: created.token };
      }
      navigate('/ui/credentials/');
    },
  });
  clear(main, pageHead(id ? `Edit credential set: ${s.name}` : 'New credential set'),
    id ? notice('Secrets are never shown. Leave a secret empty to keep it.', 'muted') : null,
    h('section', { class: 'card' }, form));
  form.elements.name.focus();
}

export function registerCredentials() {
  route('/ui/credentials', listView);
  route('/ui/credentials/new', (main) => formView(main, {}));
  route('/ui/credentials/:id/edit', formView);
}
