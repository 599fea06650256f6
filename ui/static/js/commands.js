// commands.js: the command list, detail and the create/edit form with its variables
// editor, which checks placeholders against variable rows as you type.

import { h, clear, link, badge, loading, pageHead, dl, refText, fmtTime, table, errorBox } from './dom.js';
import { get, post, patch, T, describeFields } from './api.js';
import { route, navigate } from './router.js';
import { buildForm, metaFields } from './forms.js';
import { listPage, emptyState } from './list.js';
import { can, session } from './session.js';
import { deleteButton } from './resources.js';

const CMD = { path: `${T}/commands/`, one: 'command', type: 'netbox_toolkit_plugin.command' };

const PLACEHOLDER = /<([A-Za-z][A-Za-z0-9_]*)>/g;
const ANY_ANGLE = /<([^<>\s]*)>/g;

// LITERAL names look like placeholders but are command text, as the server has it:
// <cr> is how Cisco help and pipelines spell the end of a line.
const LITERAL = new Set(['cr']);
const isVarName = (n) => /^[A-Za-z][A-Za-z0-9_]*$/.test(n) && !LITERAL.has(n.toLowerCase());

/** placeholders returns the distinct variable names in a command text, in order. */
export function placeholders(text) {
  return [...new Set([...(text || '').matchAll(PLACEHOLDER)].map((m) => m[1]).filter(isVarName))];
}

/** literals returns the angle-bracket texts that are not variables (<cr>, <1-4094>). */
function literals(text) {
  return [...new Set([...(text || '').matchAll(ANY_ANGLE)].map((m) => m[0]).filter((x) => !isVarName(x.slice(1, -1))))];
}

/** commandText renders a command with its placeholders highlighted. */
export function commandText(text) {
  const out = [];
  let last = 0;
  for (const m of (text || '').matchAll(PLACEHOLDER)) {
    if (!isVarName(m[1])) continue;
    out.push(text.slice(last, m.index), h('span', { class: 'ph' }, m[0]));
    last = m.index + m[0].length;
  }
  out.push((text || '').slice(last));
  return h('pre', { class: 'cmd' }, out);
}

export const typeBadge = (t) => badge(t, t === 'config' ? 'warn' : 'info');

/** choicesOf is a described field's choices as [value, label] pairs. */
const choicesOf = (m) => ((m && m.choices) || []).map((c) => [c.value, c.display_name]);

async function listView(main) {
  const desc = await describeFields(CMD.path);
  return listPage(main, {
    title: 'Commands', path: CMD.path,
    empty: emptyState('No commands yet. A command is a CLI line (show or config) for one or more platforms, with variables filled in when it runs.',
      can(CMD.type, 'add') ? link('/ui/commands/new', 'Create a command', { class: 'btn primary' }) : h('p', { class: 'muted' }, 'You may not create commands: ask an administrator.')),
    actions: can(CMD.type, 'add') ? [link('/ui/commands/new', 'New command', { class: 'btn primary' })] : [],
    filters: [{ name: 'q', label: 'Search' }, { name: 'name', label: 'Name (exact)' },
      { name: 'command_type', label: 'Type', type: 'select', options: choicesOf(desc.command_type) },
      { name: 'platform_id', label: 'Platform', type: 'ref', ref: { path: '/api/dcim/platforms/' } },
      // At a hub, each site's commands are its own: a command runs at its site.
      ...(session.hub ? [{ name: 'site_id', label: 'Site', type: 'ref', ref: { path: '/api/dcim/sites/' } }] : [])],
    columns: [
      { sort: 'name', label: 'Name', cell: (c) => link(`/ui/commands/${c.id}`, c.name) },
      ...(session.hub ? [{ sort: 'site', label: 'Site', cell: (c) => (c.site ? refText(c.site) : 'this hub') }] : []),
      { sort: 'command_type', label: 'Type', cell: (c) => typeBadge(c.command_type) },
      { label: 'Command', cell: (c) => h('code', { class: 'clip' }, c.command) },
      { label: 'Platforms', cell: (c) => c.platforms.map((p) => p.name).join(', ') },
      { label: 'Variables', cell: (c) => c.variables.map((v) => v.name).join(', ') || '—' },
    ],
  });
}

async function detailView(main, { id }) {
  clear(main, loading());
  const c = await get(`${CMD.path}${id}/`);
  clear(main, pageHead(`Command: ${c.name}`,
    can(CMD.type, 'change') ? link(`/ui/commands/${id}/edit`, 'Edit', { class: 'btn' }) : null,
    can(CMD.type, 'delete') ? deleteButton(CMD, c, '/ui/commands/') : null),
  h('p', {}, link('/ui/commands/', '← all commands')),
  h('section', { class: 'card' },
    commandText(c.command),
    dl([['Type', typeBadge(c.command_type)], ...(session.hub ? [['Site', c.site ? refText(c.site) : 'this hub']] : []),
      ['Platforms', c.platforms.map((p) => p.name).join(', ')],
      ['Description', c.description], ['Tags', (c.tags || []).map(refText).join(', ')],
      ['Created', fmtTime(c.created)], ['Last updated', fmtTime(c.last_updated)]])),
  h('section', { class: 'card' }, h('h2', {}, 'Variables'),
    table([{ label: 'Name', cell: (v) => h('code', {}, `<${v.name}>`) }, { label: 'Label', cell: (v) => v.display_name },
      { label: 'Type', cell: (v) => v.variable_type }, { label: 'Required', cell: (v) => (v.required ? 'yes' : 'no') },
      { label: 'Default', cell: (v) => v.default_value || '—' }, { label: 'Pattern', cell: (v) => (v.pattern ? h('code', {}, v.pattern) : '—') },
      { label: 'Help', cell: (v) => v.help_text || '—' }],
    c.variables, 'No variables: the command runs as written.')),
  h('section', { class: 'card' }, h('h2', {}, 'Run it'),
    h('p', {}, 'Commands run from a device page. ', link(`/ui/devices/?platform_id=${c.platforms[0] ? c.platforms[0].id : ''}`, 'Pick a device →')),
    h('p', {}, link(`/ui/logs/?command_id=${c.id}`, 'This command’s logs →'))));
}

/** variablesEditor edits the variable rows and checks them against the command text. */
function variablesEditor(initial, getText, types, patternHelp) {
  const rows = h('div', { class: 'var-rows' });
  const status = h('div', { class: 'var-status', 'aria-live': 'polite' });
  const box = h('fieldset', { class: 'field vars' }, h('legend', {}, 'Variables'),
    h('p', { class: 'help' }, 'Every ', h('code', {}, '<name>'), ' in the command needs a row here, and every row must appear in the command. ',
      h('code', {}, '<cr>'), ' or ', h('code', {}, '<1-4094>'), ' are not names and stay literal.'),
    status, rows,
    h('button', { type: 'button', class: 'btn small', onclick: () => { addRow({}); check(); rows.lastChild.querySelector('input').focus(); } }, '+ Add variable'));
  let n = 0;

  function addRow(v) {
    const i = ++n;
    const err = h('div', { class: 'field-error', id: `var-${i}-err` });
    const row = h('div', { class: 'var-row', 'data-row': i },
      h('div', { class: 'vf' }, h('label', { for: `var-${i}-name` }, 'Name'),
        h('input', { id: `var-${i}-name`, class: 'v-name mono', value: v.name || '', required: true, autocomplete: 'off', 'aria-describedby': `var-${i}-err`, oninput: check })),
      h('div', { class: 'vf' }, h('label', { for: `var-${i}-label` }, 'Label'), h('input', { id: `var-${i}-label`, class: 'v-label', value: v.display_name || '', placeholder: 'as the name' })),
      h('div', { class: 'vf' }, h('label', { for: `var-${i}-type` }, 'Type'),
        h('select', { id: `var-${i}-type`, class: 'v-type' }, types.map(([t, l]) => h('option', { value: t, selected: t === (v.variable_type || 'text') }, l)))),
      h('div', { class: 'vf' }, h('label', { for: `var-${i}-default` }, 'Default'), h('input', { id: `var-${i}-default`, class: 'v-default', value: v.default_value || '' })),
      h('div', { class: 'vf' }, h('label', { for: `var-${i}-help` }, 'Help text'), h('input', { id: `var-${i}-help`, class: 'v-help', value: v.help_text || '' })),
      h('div', { class: 'vf' }, h('label', { for: `var-${i}-pattern` }, 'Pattern'),
        h('input', { id: `var-${i}-pattern`, class: 'v-pattern mono', value: v.pattern || '', placeholder: 'e.g. [0-9]{1,4}', title: patternHelp || '', autocomplete: 'off' })),
      h('div', { class: 'vf vf-tail' }, h('label', {}, h('input', { type: 'checkbox', class: 'v-required', checked: v.required !== false }), ' required'),
        h('button', { type: 'button', class: 'btn small danger-text', 'aria-label': 'Remove variable', onclick: () => { row.remove(); check(); } }, 'Remove')),
      err);
    rows.append(row);
  }

  function names() { return [...rows.querySelectorAll('.v-name')].map((x) => x.value.trim()); }

  /** check compares placeholders and rows; it returns the problems (empty when fine). */
  function check() {
    const text = getText();
    const ph = placeholders(text);
    const have = names();
    const problems = [];
    const counts = {};
    have.forEach((x) => { counts[x] = (counts[x] || 0) + 1; });
    rows.querySelectorAll('.var-row').forEach((row) => {
      const input = row.querySelector('.v-name');
      const name = input.value.trim();
      let msg = '';
      if (!name) msg = 'Give the variable a name.';
      else if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) msg = 'A name is a letter, then letters, digits or _.';
      else if (!isVarName(name)) msg = `“${name}” cannot be a variable: <${name}> is literal command text.`;
      else if (counts[name] > 1) msg = `“${name}” is used by more than one row.`;
      else if (!ph.includes(name)) msg = `<${name}> does not appear in the command: add it or remove this row.`;
      row.querySelector('.field-error').textContent = msg;
      if (msg) { input.setAttribute('aria-invalid', 'true'); problems.push(msg); } else input.removeAttribute('aria-invalid');
    });
    const missing = ph.filter((p) => !have.includes(p));
    missing.forEach((m) => problems.push(`<${m}> in the command has no variable row.`));
    const lits = literals(text);
    clear(status,
      ph.length ? h('div', { class: 'chips' }, 'Placeholders: ', ph.map((p) => have.includes(p)
        ? h('span', { class: 'chip ok' }, `<${p}> ✓`)
        : h('span', { class: 'chip bad' }, `<${p}> missing `,
          h('button', { type: 'button', class: 'linkish', onclick: () => { addRow({ name: p, variable_type: /interface|intf|port/i.test(p) ? 'inventory_interface' : /vlan/i.test(p) ? 'inventory_vlan' : 'text' }); check(); } }, 'add row')))) : h('div', { class: 'muted' }, 'No placeholders in the command.'),
      lits.length ? h('div', { class: 'muted' }, 'Literal (not variables): ', lits.join(' ')) : null,
      missing.length ? h('div', { class: 'field-error' }, missing.map((m) => `<${m}>`).join(', '), ' in the command ', missing.length > 1 ? 'have' : 'has', ' no variable row.') : null);
    return problems;
  }

  function values() {
    return [...rows.querySelectorAll('.var-row')].map((row) => {
      const name = row.querySelector('.v-name').value.trim();
      return {
        name, display_name: row.querySelector('.v-label').value.trim() || name,
        variable_type: row.querySelector('.v-type').value, required: row.querySelector('.v-required').checked,
        default_value: row.querySelector('.v-default').value, help_text: row.querySelector('.v-help').value,
        pattern: row.querySelector('.v-pattern').value,
      };
    });
  }

  (initial || []).forEach(addRow);
  return { el: box, check, values };
}

async function formView(main, { id }) {
  clear(main, loading());
  const c = id ? await get(`${CMD.path}${id}/`) : {};
  const desc = await describeFields(id ? `${CMD.path}${id}/` : CMD.path);
  const varTypes = choicesOf(desc.variables && desc.variables.child.children.variable_type);
  let editor;
  const form = await buildForm({
    isEdit: !!id, initial: c, submitLabel: id ? 'Save' : 'Create command', cancelHref: id ? `/ui/commands/${id}` : '/ui/commands/',
    fields: metaFields(desc, {
      command: { type: 'textarea', mono: true, rows: 3, placeholder: 'show interfaces <interface>', help: 'Variables as <name>. A config command may hold several lines; each is sent in config mode.' },
      description: { type: 'textarea', rows: 2 },
      platforms: { help: undefined },
      custom_fields: false,
    }),
    extra: (editor = variablesEditor(c.variables, () => form.elements.command.value, varTypes,
      desc.variables && desc.variables.child.children.pattern && desc.variables.child.children.pattern.help_text)).el,
    collect: (v) => {
      const problems = editor.check();
      if (problems.length) throw new Error(problems.join(' '));
      v.variables = editor.values();
    },
    onSubmit: async (v) => {
      const saved = id ? await patch(`${CMD.path}${id}/`, v) : await post(CMD.path, v);
      navigate(`/ui/commands/${saved.id}`);
    },
  });
  form.elements.command.addEventListener('input', () => editor.check());
  editor.check();
  clear(main, pageHead(id ? `Edit command: ${c.name}` : 'New command'), h('section', { class: 'card' }, form));
  form.elements.name.focus();
}

export function registerCommands() {
  route('/ui/commands', listView);
  route('/ui/commands/new', (main) => formView(main, {}));
  route('/ui/commands/:id/edit', formView);
  route('/ui/commands/:id', detailView);
}
