// import.js: the Import page. A file in NetBox's bulk import formats (or pasted text)
// is previewed first — what would be created, changed or left as it is, or every
// problem by row and column — then imported, all or nothing, through the same endpoint
// as `fieldkit import`.

import { h, clear, errorBox, pageHead, table, toast, spinner, link } from './dom.js';
import { post, T, ApiError, metadata } from './api.js';
import { route } from './router.js';
import { syncCard } from './sync.js';

const MAX = 1 << 20; // the API's body limit
const SHOWN = 500; // rows shown in a preview

const EXAMPLE = `name,site,platform,status,mgmt_ip,ssh_port,tags
par-r1,Paris 1,cisco_ios,active,192.0.2.11/24,22,core
par-sw1,Paris 1,arista_eos,active,192.0.2.12/24,2222,`;

async function importPage(main) {
  clear(main, pageHead('Import'));
  const file = h('input', { type: 'file', id: 'imp-file', accept: '.csv,.yaml,.yml,.json,.txt' });
  const text = h('textarea', { id: 'imp-text', rows: 8, class: 'mono', spellcheck: 'false', placeholder: EXAMPLE });
  // The object types and formats are the server's (OPTIONS on the import path).
  const fields = ((await metadata(`${T}/import/`)).actions || {}).POST || {};
  const choices = (name) => (fields[name] && fields[name].choices) || [];
  const kind = h('select', { id: 'imp-type' }, h('option', { value: '' }, 'from the file name or its columns'), choices('type').map((c) => h('option', { value: c.value }, c.display_name)));
  const format = h('select', { id: 'imp-format' }, h('option', { value: '' }, 'from the name or the content'), choices('format').map((c) => h('option', { value: c.value }, c.value.toUpperCase())));
  const preview = h('button', { type: 'button', class: 'btn' }, 'Preview');
  const run = h('button', { type: 'button', class: 'btn primary', disabled: true }, 'Import');
  const out = h('section', { class: 'card import-result', 'aria-live': 'polite', hidden: true });
  let previewed = null; // the request a successful preview was made of

  const request = async () => {
    let data = text.value;
    let filename = '';
    if (file.files.length) {
      const f = file.files[0];
      if (f.size > MAX) throw new Error(`${f.name} is ${Math.ceil(f.size / 1024)} KiB; the limit is 1 MiB. Split it, or use fieldkit import on the server.`);
      data = await f.text();
      filename = f.name;
    }
    if (!data.trim()) throw new Error('Choose a file or paste its text.');
    return { data, filename, type: kind.value, format: format.value };
  };
  const reset = () => { previewed = null; run.disabled = true; };
  for (const el of [file, text, kind, format]) el.addEventListener('input', reset);
  file.addEventListener('change', reset);

  async function send(dry, btn) {
    const label = btn.textContent;
    btn.disabled = true;
    clear(btn, spinner(), dry ? ' Checking…' : ' Importing…');
    out.hidden = false;
    try {
      const req = dry ? await request() : previewed;
      const rep = await post(`${T}/import/`, { ...req, dry_run: dry });
      clear(out, report(rep));
      if (dry) { previewed = req; run.disabled = rep.created + rep.updated === 0; } else {
        toast(`Imported: ${rep.created} created, ${rep.updated} updated`);
        reset();
      }
    } catch (err) {
      clear(out, problems(err));
      reset();
    } finally {
      btn.textContent = label;
      btn.disabled = btn === run && !previewed;
    }
  }
  preview.addEventListener('click', () => send(true, preview));
  run.addEventListener('click', () => send(false, run));

  main.append(
    h('p', { class: 'muted' }, 'NetBox\u2019s bulk import formats: CSV with a header row of field names, or a YAML or JSON list of objects, or a YAML or JSON mapping of object types to lists. ',
      'Name related objects as you would: a site or platform by its name or slug, a device by its name, an interface by its device and name, a VLAN by its VID. ',
      'Devices take mgmt_ip (with its prefix length) and ssh_port; addresses device, interface and is_primary; cf_<name> columns are custom fields. ',
      'A row naming an existing object (the same slug; the same device at the same site) updates it. Nothing is written unless every row is good.'),
    h('section', { class: 'card' },
      h('div', { class: 'field' }, h('label', { for: 'imp-file' }, 'File'), file),
      h('div', { class: 'field' }, h('label', { for: 'imp-text' }, 'or paste it'), text),
      h('div', { class: 'row2 import-opts' },
        h('div', { class: 'field' }, h('label', { for: 'imp-type' }, 'Object type'), kind),
        h('div', { class: 'field' }, h('label', { for: 'imp-format' }, 'Format'), format)),
      h('div', { class: 'actions form-actions' }, preview, run,
        h('span', { class: 'muted' }, 'Preview first: it shows what the import would do and writes nothing.'))),
    out);
  const card = await syncCard();
  if (card) main.append(card);
}

/** report shows what an import did, or would do. */
function report(rep) {
  const verb = rep.dry_run ? 'would be' : 'were';
  const rows = rep.rows.slice(0, SHOWN);
  return [
    h('h2', {}, rep.dry_run ? 'Preview' : 'Imported'),
    h('p', {}, `${rep.created} ${verb} created, ${rep.updated} ${verb} changed, ${rep.unchanged} ${rep.dry_run ? 'would stay' : 'stayed'} as they are.`,
      rep.dry_run ? ' Nothing has been written yet.' : ''),
    table([
      { label: 'Objects', cell: (t) => (rep.dry_run ? t.type : link(`/ui/${t.type}/`, t.type)) },
      { label: 'Created', cell: (t) => String(t.created), class: 'num' },
      { label: 'Changed', cell: (t) => String(t.updated), class: 'num' },
      { label: 'Unchanged', cell: (t) => String(t.unchanged), class: 'num' },
      { label: 'Ignored NetBox columns', cell: (t) => t.ignored_columns.join(', ') || '—' },
    ], rep.types),
    h('h3', {}, 'Rows'),
    table([
      { label: 'Where', cell: (r) => (r.row ? `${r.type} row ${r.row}` : `${r.type} item ${r.item}`) },
      { label: 'Action', cell: (r) => h('span', { class: `badge ${r.action === 'create' ? 'ok' : r.action === 'update' ? 'info' : ''}` }, r.action) },
      { label: 'Object', cell: (r) => r.display },
    ], rows, 'No rows.'),
    rep.rows.length > rows.length ? h('p', { class: 'muted' }, `…and ${rep.rows.length - rows.length} more rows.`) : null,
  ];
}

/** problems shows a refused import: every problem by row and column. */
function problems(err) {
  if (!(err instanceof ApiError) || !err.body || !Array.isArray(err.body.errors)) return errorBox(err, 'Not imported');
  return [
    errorBox(new Error(err.body.detail), 'Not imported'),
    table([
      { label: 'Where', cell: (p) => `${p.type}${p.row ? ` row ${p.row}` : p.item ? ` item ${p.item}` : ''}` },
      { label: 'Column', cell: (p) => p.column || '—' },
      { label: 'Problem', cell: (p) => p.message, class: 'wrap' },
    ], err.body.errors),
  ];
}

export function registerImport() {
  route('/ui/import', importPage);
}
