// forms.js: one form builder for every create/edit page. Fields are data; server 400
// errors land next to the field they name, anything else above the buttons. An edit
// sends only the fields the user changed (a PATCH): a value the page never had cannot
// be written back by accident.

import { h, clear, errorBox, spinner, zoneLabel } from './dom.js';
import { ApiError } from './api.js';
import { picker } from './picker.js';

let uid = 0;

/**
 * metaFields turns the server's description of a resource's fields (api.describeFields) into
 * this builder's fields: every writable one, in the server's order, with its label,
 * help, limits and choices. overrides adjust a field by name; false leaves it out.
 */
export function metaFields(desc, overrides = {}) {
  const out = [];
  for (const [name, m] of Object.entries(desc || {})) {
    const o = overrides[name];
    if (m.read_only || o === false || fieldType(m) === null) continue;
    const options = (m.choices || []).map((c) => [c.value, c.display_name]);
    out.push({
      name, label: m.label, type: fieldType(m), required: m.required, help: m.help_text, default: m.default,
      maxlength: m.max_length, min: m.min_value, max: m.max_value, nullable: m.allow_null, options,
      noEmpty: m.default != null || options.some(([v]) => v === ''),
      ref: m.list_url ? { path: m.list_url } : m.child && m.child.list_url ? { path: m.child.list_url } : undefined,
      ...o,
    });
  }
  return out;
}

/** fieldType is the control of a described field (undefined: a text box; null: none fits). */
function fieldType(m) {
  if (m.write_only && m.type === 'string') return 'password';
  switch (m.type) {
    case 'boolean': return 'bool';
    case 'integer': return 'number';
    case 'choice': return 'select';
    case 'multiple choice': return 'multi';
    case 'json': return 'json';
    case 'datetime': return 'datetime';
    case 'field': return 'ref';
    case 'list': return m.child && m.child.type === 'field' ? 'refs' : null;
    default: return undefined;
  }
}

/** toInput converts a value as the API reads it into what the field edits. */
function toInput(f, v) {
  if (v === undefined) v = f.default;
  switch (f.type) {
    case 'ref': return v && typeof v === 'object' ? v.id : v ?? '';
    case 'refs': return (v || []).map((x) => (typeof x === 'object' ? x.id : x));
    case 'multi': return v || [];
    case 'bool': return !!v;
    case 'json': return v == null ? '' : JSON.stringify(v, null, 2);
    case 'datetime': {
      if (!v) return '';
      const d = new Date(v);
      const pad = (n) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
    }
    default:
      if (v && typeof v === 'object' && 'value' in v) return v.value ?? '';
      return v ?? '';
  }
}

function checkList(name, options, selected) {
  const sel = new Set(selected.map(String));
  if (!options.length) return h('p', { class: 'muted' }, 'none available');
  return h('div', { class: 'checklist', role: 'group' }, options.map(([value, label]) =>
    h('label', { class: 'check' },
      h('input', { type: 'checkbox', name, value, checked: sel.has(String(value)) }), ' ', label)));
}

/** control builds the input for one field; raw is the value as the API read it. */
function control(f, value, id, raw) {
  const common = { id, name: f.name, required: !!f.required, 'aria-describedby': `${id}-err` };
  switch (f.type) {
    case 'textarea':
    case 'json':
      return h('textarea', { ...common, rows: f.rows || (f.type === 'json' ? 6 : 3), class: f.mono || f.type === 'json' ? 'mono' : '', value, placeholder: f.placeholder, spellcheck: f.type === 'json' ? 'false' : undefined });
    case 'number':
      return h('input', { ...common, type: 'number', value, min: f.min, max: f.max });
    case 'bool':
      return h('input', { ...common, type: 'checkbox', checked: value, required: false });
    case 'password':
      return h('input', { ...common, type: 'password', value: '', autocomplete: 'new-password', placeholder: f.placeholder });
    case 'datetime':
      return h('input', { ...common, type: 'datetime-local', value });
    case 'select':
      return h('select', common,
        f.required || f.noEmpty ? null : h('option', { value: '' }, f.emptyLabel || '—'),
        f.options.map(([v, l]) => h('option', { value: v, selected: String(v) === String(value) }, l)));
    case 'ref':
    case 'refs':
      return picker({ name: f.name, id, ref: f.ref, many: f.type === 'refs', value: raw === undefined ? (f.default ?? null) : raw,
        required: !!f.required, placeholder: f.placeholder, describedBy: `${id}-err` });
    case 'multi':
      return checkList(f.name, f.options, value);
    default:
      return h('input', { ...common, type: f.inputType || 'text', value, placeholder: f.placeholder, autocomplete: f.autocomplete || 'off', maxlength: f.maxlength, list: f.list });
  }
}

/** read collects one field's value for the request; throws Error for bad JSON. */
function read(form, f) {
  const el = form.elements[f.name];
  switch (f.type) {
    case 'bool': return el.checked;
    case 'number': return el.value === '' ? null : Number(el.value);
    case 'ref': return el.value === '' ? null : Number(el.value);
    case 'refs': return [...form.querySelectorAll(`input[name="${f.name}"]`)].map((x) => Number(x.value));
    case 'multi': return [...form.querySelectorAll(`input[name="${f.name}"]:checked`)].map((x) => x.value);
    case 'json': {
      if (el.value.trim() === '') return null;
      return JSON.parse(el.value);
    }
    case 'datetime': return el.value ? new Date(el.value).toISOString() : null;
    case 'select': return el.value === '' && f.nullable ? null : el.value;
    default: return el.value;
  }
}

/**
 * buildForm renders fields for initial (a read object or {}) and calls
 * onSubmit(values) on submit (Enter works). It returns the <form>; extra is a node
 * placed before the buttons (e.g. the variables editor) and collect(values) may add to
 * or veto (throw) the values. busyLabel shows on the button while onSubmit runs;
 * errorTitle heads a refusal. A field's list names a <datalist> of suggestions.
 */
export async function buildForm({ fields, initial = {}, onSubmit, submitLabel = 'Save', busyLabel = 'Saving…', errorTitle = 'Not saved', cancelHref, extra, collect, isEdit = false }) {
  const form = h('form', { class: 'form', novalidate: true });
  const top = h('div', { class: 'form-top' });
  const errs = {};
  form.append(top);
  const initialOf = {};
  let advanced = null;
  for (const f of fields) {
    if ((f.createOnly && isEdit) || (f.editOnly && !isEdit)) continue;
    const id = `f${++uid}-${f.name}`;
    initialOf[f.name] = comparable(f, toInput(f, initial[f.name]));
    const ctl = control(f, toInput(f, initial[f.name]), id, initial[f.name]);
    const err = h('div', { class: 'field-error', id: `${id}-err`, 'aria-live': 'polite' });
    errs[f.name] = err;
    if (f.type === 'json') {
      ctl.addEventListener('input', () => {
        try { if (ctl.value.trim()) JSON.parse(ctl.value); err.textContent = ''; ctl.removeAttribute('aria-invalid'); } catch (e) { err.textContent = `Not valid JSON: ${e.message}`; ctl.setAttribute('aria-invalid', 'true'); }
      });
    }
    const help = f.help ? h('div', { class: 'help' }, isEdit && f.editHelp ? f.editHelp : f.help) : null;
    const isGroup = f.type === 'multi';
    const row = f.type === 'bool'
      ? h('div', { class: 'field check-field' }, h('label', { for: id }, ctl, ' ', f.label), help, err)
      : h(isGroup ? 'fieldset' : 'div', { class: 'field' },
        isGroup ? h('legend', {}, f.label, f.required ? h('span', { class: 'req' }, ' *') : null) : h('label', { for: id }, f.label, f.type === 'datetime' ? ` (${zoneLabel()})` : '', f.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null),
        ctl, help, err);
    // Settings most objects never need wait behind "More settings".
    if (f.advanced) {
      if (!advanced) form.append(advanced = h('details', { class: 'more' }, h('summary', {}, 'More settings')));
      advanced.append(row);
    } else form.append(row);
  }
  slugFromName(form, isEdit && initial.slug);
  if (extra) form.append(extra);
  const submit = h('button', { type: 'submit', class: 'btn primary' }, submitLabel);
  form.append(h('div', { class: 'actions form-actions' }, submit,
    cancelHref ? h('a', { href: cancelHref, class: 'btn' }, 'Cancel') : null));

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(top);
    Object.values(errs).forEach((x) => { x.textContent = ''; });
    form.querySelectorAll('[aria-invalid]').forEach((x) => x.removeAttribute('aria-invalid'));
    const values = {};
    let bad = false;
    for (const f of fields) {
      if ((f.createOnly && isEdit) || (f.editOnly && !isEdit)) continue;
      try {
        const v = read(form, f);
        if (f.type === 'password' && v === '' && (isEdit || !f.required)) continue;
        if (isEdit && f.type !== 'password' && comparable(f, v) === initialOf[f.name]) continue;
        values[f.name] = v;
      } catch (err) {
        errs[f.name].textContent = `Not valid JSON: ${err.message}`;
        bad = true;
      }
    }
    try { if (collect) collect(values); } catch (err) { top.append(errorBox(err, 'Check the form')); bad = true; }
    if (bad) { form.querySelector('[aria-invalid], .field-error:not(:empty)')?.scrollIntoView({ block: 'center' }); return; }
    submit.disabled = true;
    const label = submit.textContent;
    clear(submit, spinner(), ` ${busyLabel}`);
    try {
      await onSubmit(values);
    } catch (err) {
      showErrors(err, top, errs, form, errorTitle);
    } finally {
      submit.disabled = false;
      submit.textContent = label;
    }
  });
  return form;
}

/**
 * comparable turns a field's value (as toInput gives it or read returns it) into a
 * string that is equal for equal values: a number or an empty text box, JSON however it
 * is spaced, a list of ids in any order.
 */
function comparable(f, v) {
  if (v === undefined || v === null || v === '') return '';
  switch (f.type) {
    case 'json':
      if (typeof v === 'string') { try { v = JSON.parse(v); } catch { return v; } }
      return JSON.stringify(sortKeys(v));
    case 'refs':
    case 'multi':
      return JSON.stringify([...v].map(String).sort());
    default:
      return String(v);
  }
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  return v;
}

/**
 * slugFromName fills a form's slug from its name as the name is typed, as NetBox does,
 * until the slug is edited by hand. An edit keeps the slug it has unless it was empty.
 */
function slugFromName(form, keep) {
  const name = form.elements.name;
  const slug = form.elements.slug;
  if (!name || !slug || !(name instanceof HTMLInputElement) || !(slug instanceof HTMLInputElement)) return;
  let touched = !!keep;
  slug.addEventListener('input', () => { touched = slug.value !== ''; });
  name.addEventListener('input', () => { if (!touched) slug.value = slugify(name.value); });
}

/**
 * slugify is a slug for a name, as the server makes one for an import: lower case,
 * accents dropped (é → e, ß → ss), every run of other characters one "-".
 */
export function slugify(text) {
  return text.toLowerCase().replace(/æ/g, 'ae').replace(/œ/g, 'oe').replace(/ß/g, 'ss').replace(/ø/g, 'o')
    .normalize('NFKD').replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9_]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 100).replace(/-+$/, '');
}

/** showErrors puts a server error's field messages next to their fields. */
export function showErrors(err, top, errs, form, title = 'Not saved') {
  if (err instanceof ApiError && err.status === 400) {
    const fe = err.fieldErrors();
    const unplaced = err.body && err.body.non_field_errors ? [].concat(err.body.non_field_errors).map(String) : [];
    for (const [k, msg] of Object.entries(fe)) {
      if (errs[k]) {
        errs[k].textContent = msg;
        const c = form && form.elements[k];
        if (c && c.setAttribute) c.setAttribute('aria-invalid', 'true');
      } else unplaced.push(`${k}: ${msg}`);
    }
    top.append(errorBox(unplaced.length || err.body?.detail ? new Error(err.body?.detail || unplaced.join(' · ')) : new Error('Fix the highlighted fields.'), title));
  } else {
    top.append(errorBox(err, title));
  }
  top.scrollIntoView({ block: 'nearest' });
}
