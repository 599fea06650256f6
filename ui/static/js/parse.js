// parse.js: the template tester. An output pasted with its platform and command is
// parsed as an execution would parse it (POST /api/plugins/toolkit/parse/), or with a
// template pasted beside it; nothing runs on a device.

import { h, clear, pageHead, dl, copyButton, loading } from './dom.js';
import { post, getAll, T } from './api.js';
import { route } from './router.js';
import { can } from './session.js';
import { buildForm } from './forms.js';
import { parsedTable } from './device.js';

/** templateSource splits parsed_output.template ("builtin/x.textfsm", "<dir>/x.textfsm", "request"). */
function templateSource(name) {
  if (!name) return ['—', '—'];
  if (name === 'request') return ['the template above', 'this request'];
  const i = name.lastIndexOf('/');
  if (i < 0) return [name, '—'];
  const src = name.slice(0, i);
  return [name.slice(i + 1), src === 'builtin' ? 'built into FieldKit' : `templates directory ${src}`];
}

function result(parsed) {
  const [file, source] = templateSource(parsed.template);
  const json = JSON.stringify({ parsed_output: parsed }, null, 2);
  return [
    h('div', { class: 'output-bar' }, h('h2', { id: 'parse-result-h' }, 'Result'), copyButton(() => json, 'Copy JSON')),
    parsed.success ? dl([['Template', file], ['Source', source], ['Records', String((parsed.data || []).length)]]) : null,
    parsedTable(parsed),
  ];
}

async function parsePage(main) {
  clear(main, loading());
  const { rows } = can('dcim.platform', 'view') ? await getAll('/api/dcim/platforms/') : { rows: [] };
  const list = h('datalist', { id: 'parse-platforms' },
    rows.map((p) => h('option', { value: p.slug }, p.name)));
  const out = h('section', { class: 'card parse-result', 'aria-live': 'polite', 'aria-labelledby': 'parse-result-h', hidden: true });
  const form = await buildForm({
    fields: [
      { name: 'platform', label: 'Platform', list: 'parse-platforms', maxlength: 100,
        help: 'A platform of the inventory (its slug or name) or an ntc platform name such as cisco_ios.' },
      { name: 'command', label: 'Command', maxlength: 1000, placeholder: 'show ip interface brief',
        help: 'The command that printed the output; abbreviations work as on the device.' },
      { name: 'output', label: 'Output', type: 'textarea', mono: true, rows: 12,
        help: 'Paste what the device printed.' },
      { name: 'template', label: 'Template to try', type: 'textarea', mono: true, rows: 10,
        help: 'Optional: a TextFSM template to run instead of the one the platform and command select (at most 65,536 characters).' },
    ],
    submitLabel: 'Parse', busyLabel: 'Parsing…', errorTitle: 'Not parsed',
    extra: list,
    collect: (v) => { if (!v.template.trim()) delete v.template; },
    onSubmit: async (v) => {
      out.hidden = true; // a refused request must not leave the last result looking current
      const res = await post(`${T}/parse/`, v);
      clear(out, result(res.parsed_output));
      out.hidden = false;
    },
  });
  clear(main, pageHead('Parse an output'),
    h('p', { class: 'muted' }, 'Try the template lookup on an output, or a template of your own, without running anything on a device. The result is what an execution on that platform would show.'),
    h('section', { class: 'card' }, form), out);
}

export function registerParse() {
  route('/ui/parse/', parsePage);
}
