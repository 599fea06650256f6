// device.js: the device page: its facts, the command runner, its rate-limit status and
// its recent history. The runner offers only what can work (commands for the platform
// the user may execute, active credential sets for the platform); the server still
// checks everything and its refusals are shown where they apply.

import { configCard } from './configs.js';
import { h, add, clear, link, okBadge, outcomeBadge, outcome, statusBadge, statusKind, loading, pageHead, dl, refText, fmtAgo, fmtSeconds, table, scrollBox, errorBox, spinner, copyButton, notice, clockTime } from './dom.js';
import { get, post, stream, T, ApiError, getAll, describeFields } from './api.js';
import { route } from './router.js';
import { can } from './session.js';
import { RESOURCES, deleteButton } from './resources.js';
import { commandText, typeBadge } from './commands.js';
import { listCredentialSets } from './credentials.js';

const CMD_TYPE = 'netbox_toolkit_plugin.command';

/**
 * parsedTable renders parsed records; columns follow the server's key order (the
 * template's when it sends columns). One record (show version and the like) is shown as
 * field/value rows: a single row of twenty columns reads badly on any screen.
 */
export function parsedTable(parsed) {
  if (!parsed) return null;
  if (!parsed.success) {
    // Logs written before the server's reasons were sentences of their own said "not
    // parsed: …" already: never "Not parsed: not parsed: …".
    const why = parsed.error || 'no template';
    return notice(/^not parsed\b/i.test(why) ? why[0].toUpperCase() + why.slice(1) : `Not parsed: ${why}`, 'muted');
  }
  const data = parsed.data || [];
  if (!data.length) return notice(`Parsed with ${parsed.template}: no records.`, 'muted');
  const cols = Array.isArray(parsed.columns) && parsed.columns.length ? parsed.columns : Object.keys(data[0]);
  for (const r of data) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
  const cell = (v) => (v == null ? '' : Array.isArray(v) ? v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : x)).join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const body = data.length === 1
    ? scrollBox(h('table', { class: 'record' }, h('tbody', {}, cols.map((c) => h('tr', {}, h('th', { scope: 'row' }, breakable(c)), h('td', {}, cell(data[0][c])))))))
    : table(cols.map((c) => ({ label: c, cell: (r) => cell(r[c]) })), data);
  return h('div', { class: 'parsed' },
    h('p', { class: 'muted' }, `${data.length} record${data.length === 1 ? '' : 's'} · template ${parsed.template}`), body);
}

/** breakable is a field name that may break after its underscores, never mid-word ("hostnam/e"). */
const breakable = (name) => String(name).split(/(?<=_)/).flatMap((part, i) => (i ? [h('wbr'), part] : [part]));

/** NOTES_MAX is the most characters a run's notes may hold (store.MaxNotes). */
export const NOTES_MAX = 1000;

/**
 * notesField is the runner's notes: why the command runs, kept on its log (and
 * editable there later), with a count of the characters left near the limit.
 */
export function notesField(input, err) {
  const left = h('span', { class: 'notes-left muted' });
  const count = () => {
    const n = NOTES_MAX - input.value.length;
    left.textContent = n < 100 ? ` · ${n} characters left` : '';
  };
  input.addEventListener('input', count);
  return h('div', { class: 'field notes-field' }, h('label', { for: input.id }, 'Notes ', h('span', { class: 'muted' }, '(optional)')), input,
    h('div', { class: 'help', id: `${input.id}-help` }, 'Why you run it: kept on the log, searchable, editable later.', left), err);
}

const WRAP_KEY = 'fieldkit.wrapOutput';

/** wrapPreferred is the remembered choice between wrapping and scrolling raw output. */
function wrapPreferred() {
  try { return localStorage.getItem(WRAP_KEY) === '1'; } catch { return false; }
}

/**
 * outputBlock is the raw output: monospace, with a copy button and a toggle between
 * wrapping long lines and scrolling sideways (remembered in this browser).
 */
export function outputBlock(text, truncated) {
  const pre = h('pre', { class: wrapPreferred() ? 'output wrap' : 'output', tabindex: '0', 'aria-label': 'Raw output' }, text || '(no output)');
  return h('div', { class: 'output-wrap' },
    h('div', { class: 'output-bar' }, h('span', { class: 'muted' }, 'Raw output', truncated ? ' (cut at the size limit)' : ''),
      h('div', { class: 'actions' }, wrapToggle(), copyButton(() => text, 'Copy output'))),
    pre);
}

/** wrapToggle switches every output on the page between wrapping and scrolling, and remembers it. */
function wrapToggle() {
  const toggle = h('button', { type: 'button', class: 'btn small wrap-toggle', 'aria-pressed': String(wrapPreferred()) }, 'Wrap lines');
  toggle.addEventListener('click', () => {
    const on = toggle.getAttribute('aria-pressed') !== 'true';
    try { localStorage.setItem(WRAP_KEY, on ? '1' : '0'); } catch { /* private mode: this page only */ }
    for (const p of document.querySelectorAll('pre.output')) p.classList.toggle('wrap', on);
    for (const b of document.querySelectorAll('.wrap-toggle')) b.setAttribute('aria-pressed', String(on));
  });
  return toggle;
}

/** syntaxBanner shows a detected device syntax error with its guidance. */
export function syntaxBanner(se) {
  if (!se || !se.detected) return null;
  return h('div', { class: 'msg warn syntax', role: 'alert' },
    h('strong', {}, `Syntax error (${se.type.replace(/_/g, ' ')}) on ${se.vendor}`),
    h('pre', { class: 'cmd' }, se.line),
    h('p', {}, se.guidance));
}

async function devicePage(main, { id }) {
  clear(main, loading());
  const d = await get(`/api/dcim/devices/${id}/`);
  const r = RESOURCES.devices;
  clear(main,
    pageHead(d.name,
      can(r.type, 'change') ? link(`/ui/devices/${id}/edit`, 'Edit', { class: 'btn' }) : null,
      can(r.type, 'delete') ? deleteButton(r, d, '/ui/devices/') : null),
    h('p', {}, link('/ui/devices/', '← all devices')));
  const runner = h('section', { class: 'card runner', 'aria-labelledby': 'runner-h' }, h('h2', { id: 'runner-h' }, 'Run a command'));
  const rate = h('section', { class: 'card', 'aria-labelledby': 'rate-h' }, h('h2', { id: 'rate-h' }, 'Rate limit'), loading());
  const hist = h('section', { class: 'card', 'aria-labelledby': 'hist-h' }, h('h2', { id: 'hist-h' }, 'Recent history'), loading());
  const facts = h('section', { class: 'card facts', 'aria-label': 'Device facts' }, deviceFacts(d));
  const config = configCard(d);
  main.append(h('div', { class: 'device-grid' },
    h('div', { class: 'col-main' }, config ? deviceTabs([{ id: 'run', label: 'Run a command', el: runner }, { id: 'config', label: 'Configuration', el: config }]) : runner),
    h('div', { class: 'col-side' }, facts, rate, hist)));
  // After a run the facts may have changed (the host key seen at the first login).
  const refreshFacts = () => get(`/api/dcim/devices/${id}/`).then((nd) => clear(facts, deviceFacts(nd)), () => {});
  const refresh = (ran) => {
    loadRate(rate, id);
    loadHistory(hist, id);
    if (ran) refreshFacts();
  };
  refresh(false);
  await buildRunner(runner, d, refresh);
}

/**
 * deviceTabs shows one of the device page's sections at a time (the runner, the
 * configuration), each behind a tab; the chosen one is in the address (?tab=config), so
 * that a link opens it and a reload keeps it. Arrow keys move between the tabs.
 */
function deviceTabs(panels) {
  const want = new URLSearchParams(location.search).get('tab');
  const tabs = panels.map((p, i) => {
    const tab = h('button', { type: 'button', role: 'tab', id: `tab-${p.id}`, class: 'tab', 'aria-controls': `panel-${p.id}` }, p.label);
    Object.assign(p.el, { id: `panel-${p.id}` });
    p.el.classList.add('tab-panel');
    p.el.setAttribute('role', 'tabpanel');
    p.el.setAttribute('aria-labelledby', `tab-${p.id}`);
    tab.addEventListener('click', () => select(i, true));
    tab.addEventListener('keydown', (e) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
      if (!step) return;
      const j = (i + step + panels.length) % panels.length;
      select(j, true);
      tabs[j].focus();
    });
    return tab;
  });
  function select(i, remember) {
    panels.forEach((p, j) => {
      tabs[j].setAttribute('aria-selected', String(i === j));
      tabs[j].tabIndex = i === j ? 0 : -1;
      p.el.hidden = i !== j;
    });
    if (!remember) return;
    const u = new URLSearchParams(location.search);
    if (i) u.set('tab', panels[i].id); else u.delete('tab');
    const q = u.toString();
    history.replaceState(null, '', location.pathname + (q ? `?${q}` : ''));
  }
  select(Math.max(0, panels.findIndex((p) => p.id === want)), false);
  return [h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Device sections' }, tabs), panels.map((p) => p.el)];
}

/** deviceFacts is the facts panel of a device page. */
function deviceFacts(d) {
  const cf = d.custom_fields || {};
  return dl([
    ['Status', statusBadge(d.status)],
    ['Site', d.site ? link(`/ui/sites/${d.site.id}`, d.site.name) : '—'],
    ['Platform', d.platform ? link(`/ui/platforms/${d.platform.id}`, d.platform.name) : '—'],
    ['Primary IP', d.primary_ip ? d.primary_ip.address : '—'],
    ['SSH port', cf.ssh_port || 22],
    ['Description', d.description],
    ['Host key', d.host_key_fingerprint ? h('code', { class: 'fingerprint' }, d.host_key_fingerprint) : 'not seen yet'],
    ['Interfaces', link(`/ui/interfaces/?device_id=${d.id}`, 'list')],
  ]);
}

/** clockIn is the local time of day seconds from now, to the second. */
const clockIn = (seconds) => clockTime(new Date(Date.now() + seconds * 1000));

async function loadRate(box, id) {
  const head = box.firstChild;
  try {
    const s = await get(`/ui/api/devices/${id}/rate-limit/`);
    if (!s.enabled) { clear(box, head, h('p', { class: 'muted' }, 'No rate limit is enabled.')); return; }
    const pct = Math.min(100, Math.round((s.current_count / Math.max(1, s.limit)) * 100));
    const bar = h('div', { class: 'meter-fill' });
    bar.style.width = `${pct}%`;
    if (pct >= 100) bar.classList.add('full');
    clear(box, head,
      h('p', {}, h('strong', {}, `${s.current_count} / ${s.limit}`), ` successful commands in the last ${s.time_window_minutes} min`),
      h('div', { class: 'meter', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': s.limit, 'aria-valuenow': s.current_count, 'aria-label': 'Rate limit use' }, bar),
      s.retry_after_seconds > 0 ? h('p', { class: 'msg warn' }, `Limit reached: the next run is possible at ${clockIn(s.retry_after_seconds)} (in ${s.retry_after_seconds} s).`) : null);
  } catch (err) {
    clear(box, head, errorBox(err));
  }
}

async function loadHistory(box, id) {
  const head = box.firstChild;
  try {
    const page = await get(`${T}/command-logs/?device_id=${id}&limit=10`);
    clear(box, head, page.results.length ? h('ul', { class: 'history' }, page.results.map((l) => h('li', {},
      outcomeBadge(l), ' ', link(`/ui/logs/${l.id}`, l.command ? l.command.name : '(deleted command)'),
      h('span', { class: 'muted' }, ` · ${l.username} · `, fmtAgo(l.created)),
      l.command && l.command.id ? [' · ', link(`/ui/logs/history?device_id=${id}&command_id=${l.command.id}`, 'history', { title: `Every run of ${l.command.name} here, marked where its output changed` })] : null,
      l.notes ? h('p', { class: 'log-notes' }, l.notes) : null))) : h('p', { class: 'muted' }, 'Nothing has run on this device yet.'),
    page.count > 10 ? link(`/ui/logs/?device_id=${id}`, `All ${page.count} logs →`) : null);
  } catch (err) {
    clear(box, head, errorBox(err));
  }
}

async function buildRunner(box, d, refresh) {
  if (!d.platform) {
    box.append(notice('This device has no platform, so no command can run on it. Edit the device and set its platform.', 'warn'));
    return;
  }
  let cmds, sets, types;
  try {
    [cmds, sets, types] = await Promise.all([
      getAll(`${T}/commands/`, { platform_id: d.platform.id }).then((x) => x.rows),
      listCredentialSets(),
      describeFields(`${T}/commands/`).then((f) => (f.command_type || {}).choices || [], () => []),
    ]);
  } catch (err) {
    box.append(errorBox(err));
    return;
  }
  const mayRun = (c) => can(CMD_TYPE, `execute_${c.command_type}`);
  const runnable = cmds.filter(mayRun);
  const hidden = cmds.length - runnable.length;
  sets = sets.filter((s) => s.is_active && (!s.platforms.length || s.platforms.some((p) => p.id === d.platform.id)));
  if (!runnable.length) {
    add(box, notice(cmds.length ? `You may not execute any of the ${cmds.length} commands for ${d.platform.name}.` : `No commands exist for ${d.platform.name} yet.`, 'warn'),
      can(CMD_TYPE, 'add') ? link('/ui/commands/new', 'Create a command →') : null);
    return;
  }
  // One group per command type: in the server's order and with its labels where it
  // describes them (to a user who may add commands), else as the commands name them.
  const kinds = [...types.map((c) => [c.value, c.display_name]), ...runnable.map((c) => [c.command_type, c.command_type])]
    .filter(([v], i, all) => all.findIndex(([w]) => w === v) === i);
  const form = h('form', { class: 'form run-form', novalidate: true });
  const top = h('div', { class: 'form-top' });
  const cmdSel = h('select', { id: 'run-command', name: 'command', required: true },
    h('option', { value: '' }, 'Choose a command…'),
    kinds.map(([t, label]) => {
      const group = runnable.filter((c) => c.command_type === t);
      return group.length ? h('optgroup', { label },
        group.map((c) => h('option', { value: c.id }, c.name))) : null;
    }));
  const cmdErr = h('div', { class: 'field-error', id: 'run-command-err' });
  const preview = h('div', { class: 'preview' });
  const varsBox = h('div', { class: 'run-vars' });
  const setSel = h('select', { id: 'run-set', name: 'set', required: true, 'aria-describedby': 'run-set-err' },
    sets.length ? null : h('option', { value: '' }, 'No active credential set for this platform'),
    sets.map((s) => h('option', { value: s.id }, `${s.name} (${s.username})`)));
  const preferred = preferredSet(sets, d);
  if (preferred) setSel.value = String(preferred.id);
  setSel.addEventListener('change', () => rememberSet(d.id, setSel.value));
  const setErr = h('div', { class: 'field-error', id: 'run-set-err' });
  const timeout = h('input', { id: 'run-timeout', name: 'timeout', type: 'number', min: 5, max: 300, value: 30, 'aria-describedby': 'run-timeout-err' });
  const timeoutErr = h('div', { class: 'field-error', id: 'run-timeout-err' });
  const notes = h('textarea', { id: 'run-notes', name: 'notes', rows: 2, maxlength: NOTES_MAX, placeholder: 'e.g. pre-change OSPF config, CHG1234', 'aria-describedby': 'run-notes-help run-notes-err' });
  const notesErr = h('div', { class: 'field-error', id: 'run-notes-err' });
  const runBtn = h('button', { type: 'submit', class: 'btn primary run-btn' }, 'Run');
  const result = h('div', { class: 'result', 'aria-live': 'polite' });
  const varErrs = {};
  let current = null;

  add(form, top,
    h('div', { class: 'field' }, h('label', { for: 'run-command' }, 'Command'), cmdSel, cmdErr,
      hidden ? h('div', { class: 'help' }, `${hidden} command${hidden === 1 ? '' : 's'} for this platform hidden: you may not execute ${hidden === 1 ? 'it' : 'them'}.`) : null),
    preview, varsBox,
    h('div', { class: 'row2' },
      h('div', { class: 'field' }, h('label', { for: 'run-set' }, 'Credential set'), setSel, setErr,
        sets.length ? null : h('div', { class: 'help' }, link('/ui/credentials/new', 'Create a credential set →'))),
      h('div', { class: 'field narrow' }, h('label', { for: 'run-timeout' }, 'Timeout (s)'), timeout, timeoutErr)),
    notesField(notes, notesErr),
    h('div', { class: 'actions run-actions' }, runBtn, h('span', { class: 'run-state', 'aria-live': 'polite' })));
  box.append(form, result);

  cmdSel.addEventListener('change', async () => {
    clear(varsBox); clear(preview); clear(cmdErr); clear(result);
    Object.keys(varErrs).forEach((k) => delete varErrs[k]);
    current = runnable.find((c) => String(c.id) === cmdSel.value) || null;
    if (!current) return;
    preview.append(typeBadge(current.command_type), commandText(current.command));
    if (!current.variables.length) return;
    varsBox.append(loading());
    try {
      const vc = await get(`${T}/commands/${current.id}/variable-choices/?device_id=${d.id}`);
      clear(varsBox, h('h3', {}, 'Variables'), current.variables.map((v) => varInput(v, vc.variables[v.name], varErrs)));
    } catch (err) {
      clear(varsBox, errorBox(err, 'Variables could not be loaded'));
    }
  });

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(top); clear(result); clear(cmdErr); clear(setErr); clear(timeoutErr); clear(notesErr);
    Object.values(varErrs).forEach((x) => clear(x));
    if (!current) { cmdErr.textContent = 'Choose a command.'; cmdSel.focus(); return; }
    const setId = Number(setSel.value);
    if (!setId) { setErr.textContent = 'You need an active credential set for this platform.'; return; }
    const variables = {};
    for (const v of current.variables) {
      const el = form.elements[`var_${v.name}`];
      if (el && el.value !== '') variables[v.name] = el.value;
    }
    rememberSet(d.id, setId);
    // A logged-in user names one of their own sets; the server checks it is theirs,
    // active and valid for the platform, exactly as it checks a token.
    const body = { device_id: d.id, credential_set_id: setId, variables, timeout: Number(timeout.value) || 30, notes: notes.value.trim() };
    if (current.command_type !== 'config') {
      await run(body);
      return;
    }
    // A change asks first, showing the lines exactly as the server renders them.
    let rendered;
    try {
      rendered = await post(`${T}/commands/${current.id}/validate-variables/`, { device_id: d.id, variables });
    } catch (err) {
      showRunError(err);
      return;
    }
    confirmChange(rendered.command, () => run(body));
  });

  // Any edit of the form withdraws a question asked about its earlier values.
  const withdraw = () => form.querySelector('.confirm-change')?.remove();
  form.addEventListener('input', withdraw);
  form.addEventListener('change', withdraw);

  /** confirmChange shows the lines a config command will send and runs it on Send. */
  function confirmChange(text, send) {
    withdraw();
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    const sendBtn = h('button', { type: 'button', class: 'btn primary send-btn' }, 'Send to device');
    const backBtn = h('button', { type: 'button', class: 'btn back-btn' }, 'Go back');
    const box = h('div', { class: 'confirm-change msg warn', role: 'alertdialog', 'aria-labelledby': 'confirm-h', 'aria-describedby': 'confirm-p' },
      h('h3', { id: 'confirm-h' }, `Change the configuration of ${d.name}?`),
      h('p', { id: 'confirm-p' }, `${lines.length === 1 ? 'This line goes' : `These ${lines.length} lines go`} to the device in configuration mode, exactly as shown:`),
      h('pre', { class: 'output wrap confirm-lines', tabindex: '0', 'aria-label': 'Lines to send' }, lines.join('\n')),
      h('div', { class: 'actions' }, sendBtn, backBtn));
    sendBtn.addEventListener('click', () => { box.remove(); send(); });
    backBtn.addEventListener('click', () => { box.remove(); runBtn.focus(); });
    box.addEventListener('keydown', (e) => { if (e.key === 'Escape') backBtn.click(); });
    form.querySelector('.run-actions').before(box);
    sendBtn.focus();
  }

  async function run(body) {
    const state = form.querySelector('.run-state');
    const cancelBtn = h('button', { type: 'button', class: 'btn danger cancel-btn' }, 'Cancel');
    const live = liveOutput();
    let started = null, runId = null;
    runBtn.disabled = true;
    cmdSel.disabled = true;
    clear(runBtn, spinner(), ' Running…');
    const seconds = () => ((performance.now() - started) / 1000);
    const tick = () => {
      state.textContent = started == null ? `connecting to ${d.name}…`
        : `running on ${d.name}… ${Math.floor(seconds())} s · ${live.lines()} line${live.lines() === 1 ? '' : 's'} so far`;
    };
    tick();
    const timer = setInterval(tick, 250);
    form.setAttribute('aria-busy', 'true');
    cancelBtn.addEventListener('click', async () => {
      cancelBtn.disabled = true;
      cancelBtn.textContent = 'Cancelling…';
      try { await post(`/ui/api/runs/${runId}/cancel/`); } catch (err) {
        cancelBtn.replaceWith(errorBox(err, 'Not cancelled'));
      }
    });
    try {
      const res = await stream(`/ui/api/commands/${current.id}/run/`, body, {
        started: (ev) => {
          started = performance.now();
          runId = ev.run_id;
          runBtn.after(ev.cancellable ? cancelBtn
            : h('span', { class: 'help no-cancel' }, 'A config command runs to its end: stopping it halfway could leave the device half-configured.'));
          clear(result, live.el);
        },
        output: (ev) => live.append(ev.text),
        skipped: (ev) => live.append(`\n[… ${ev.bytes} bytes not shown while running: the browser fell behind; the full output follows]\n`),
      });
      showResult(result, res);
      const f = res.failure;
      // A run that failed before its command reached the device did not "finish".
      state.textContent = f && f.reason === 'cancelled' ? `cancelled after ${seconds().toFixed(1)} s`
        : f && ['connect', 'login', 'enable'].includes(f.phase) ? `not run: the ${f.phase} step failed after ${seconds().toFixed(1)} s`
          : `finished in ${seconds().toFixed(1)} s`;
      refresh(true);
    } catch (err) {
      if (started == null) {
        // Refused before it started: there is no duration to show.
        state.textContent = '';
        showRunError(err);
      } else {
        state.textContent = `no result after ${seconds().toFixed(1)} s`;
        result.append(errorBox(err, 'No result'));
        refresh(true);
      }
    } finally {
      clearInterval(timer);
      form.removeAttribute('aria-busy');
      cmdSel.disabled = false;
      releaseRunBtn();
      cancelBtn.remove();
      form.querySelector('.no-cancel')?.remove();
    }
  }

  /**
   * holdRuns keeps the Run button waiting for the device's next free slot, saying at
   * what time that is and counting down to it; then the runner offers Run again.
   */
  let heldUntil = 0, holdTimer = null;
  function holdRuns(seconds, when) {
    heldUntil = Date.now() + seconds * 1000;
    const at = clockIn(seconds);
    clearInterval(holdTimer);
    const tick = () => {
      if (!runBtn.isConnected) { clearInterval(holdTimer); return; } // the page was left
      const left = Math.ceil((heldUntil - Date.now()) / 1000);
      if (left <= 0) {
        clearInterval(holdTimer);
        heldUntil = 0;
        when.textContent = `${d.name} takes commands again: run when ready.`;
        when.closest('.msg')?.classList.replace('error', 'info');
        releaseRunBtn();
        refresh();
        return;
      }
      when.textContent = `The next run on ${d.name} is possible at ${at} (in ${left} s).`;
      runBtn.disabled = true;
      runBtn.textContent = `Run (in ${left} s)`;
    };
    tick();
    holdTimer = setInterval(tick, 1000);
  }

  /** releaseRunBtn offers Run again, unless the rate limit still holds it. */
  function releaseRunBtn() {
    if (heldUntil > Date.now()) return;
    runBtn.disabled = false;
    runBtn.textContent = 'Run';
  }

  function showRunError(err) {
    if (err instanceof ApiError && err.status === 400 && err.body && typeof err.body === 'object') {
      const b = err.body;
      const place = [];
      if (b.variables && typeof b.variables === 'object' && !Array.isArray(b.variables)) {
        for (const [k, msgs] of Object.entries(b.variables)) {
          if (varErrs[k]) varErrs[k].textContent = [].concat(msgs).join(' ');
          else place.push(`${k}: ${[].concat(msgs).join(' ')}`);
        }
      } else if (b.variables) place.push([].concat(b.variables).join(' '));
      const setMsg = b.credential_set_id || b.credential_token;
      if (setMsg) setErr.textContent = [].concat(setMsg).join(' ');
      if (b.timeout) timeoutErr.textContent = [].concat(b.timeout).join(' ');
      if (b.notes) notesErr.textContent = [].concat(b.notes).join(' ');
      if (b.device_id) place.push([].concat(b.device_id).join(' '));
      if (b.detail) place.push(b.detail);
      clear(top, errorBox(new Error(place.join(' ') || 'Fix the highlighted fields.'), 'Not run'));
      return;
    }
    if (err instanceof ApiError && err.status === 429) {
      const det = (err.body && err.body.details) || {};
      const wait = err.retryAfter ?? det.retry_after_seconds;
      const when = h('p', { class: 'next-run' });
      clear(top, h('div', { class: 'msg error rate-limited', role: 'alert' },
        h('strong', {}, 'Rate limit reached. '), det.reason || err.message, when));
      if (wait != null) holdRuns(wait, when);
      refresh();
      return;
    }
    clear(top, errorBox(err, err.status === 403 ? 'Not allowed' : 'Not run'));
  }
}

function varInput(v, info, varErrs) {
  const id = `var-${v.name}`;
  const choices = (info && info.choices) || [];
  const err = h('div', { class: 'field-error', id: `${id}-err` });
  varErrs[v.name] = err;
  const label = h('label', { for: id }, v.display_name || v.name, v.required ? h('span', { class: 'req' }, ' *') : null);
  let ctl;
  if (v.variable_type !== 'text') {
    ctl = h('select', { id, name: `var_${v.name}`, required: v.required, 'aria-describedby': `${id}-err` },
      h('option', { value: '' }, choices.length ? 'Choose…' : 'No choices on this device'),
      choices.map((c) => h('option', { value: c.value, selected: c.value === v.default_value }, c.display + (c.enabled === false ? ' (disabled)' : ''))));
  } else {
    ctl = h('input', { id, name: `var_${v.name}`, value: v.default_value || '', required: v.required, maxlength: 500, autocomplete: 'off', 'aria-describedby': `${id}-err` });
  }
  return h('div', { class: 'field' }, label, ctl, v.help_text ? h('div', { class: 'help' }, v.help_text) : null, err);
}

const SET_KEY = 'fieldkit.runSet.';

/**
 * preferredSet is the credential set the runner starts with on device d: the one last
 * chosen on this device, else the first set made for the device's platform, else the
 * first set offered.
 */
function preferredSet(sets, d) {
  let last = null;
  try { last = localStorage.getItem(SET_KEY + d.id); } catch { /* private mode */ }
  return sets.find((s) => String(s.id) === last)
    || sets.find((s) => s.platforms.some((p) => p.id === d.platform.id))
    || sets[0];
}

function rememberSet(deviceId, setId) {
  try { localStorage.setItem(SET_KEY + deviceId, String(setId)); } catch { /* private mode: not remembered */ }
}

/**
 * liveOutput is the output of a run while it runs: text appended as it arrives, kept
 * scrolled to the end unless the reader scrolled up to look at something.
 */
export function liveOutput() {
  const pre = h('pre', { class: wrapPreferred() ? 'output live wrap' : 'output live', tabindex: '0', 'aria-label': 'Output so far' });
  const text = document.createTextNode('');
  pre.append(text);
  let n = 0;
  const el = h('div', { class: 'output-wrap' },
    h('div', { class: 'output-bar' }, h('span', { class: 'muted' }, spinner(), ' Output as it arrives'), wrapToggle()), pre);
  return {
    el,
    lines: () => n,
    append(t) {
      const follow = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 24;
      text.appendData(t);
      n += (t.match(/\n/g) || []).length;
      if (follow) pre.scrollTop = pre.scrollHeight;
    },
  };
}

/** failureBox is a failed execution's message, its parts one click away. */
export function failureBox(message, f) {
  const parts = f ? dl([
    ['Phase', f.phase], ['Reason', (f.reason || '').replace(/_/g, ' ')],
    ['Address', f.port ? `${f.address} port ${f.port}` : f.address],
    f.username ? ['Login user', f.username] : null,
    f.credential_set ? ['Credential set', f.credential_set] : null,
    f.timeout_seconds != null ? ['Time allowed', `${f.timeout_seconds} s`] : null,
    f.cancelled_by ? ['Cancelled by', f.cancelled_by] : null,
    f.exit_status != null ? ['Exit status', String(f.exit_status)] : null,
    f.detail ? ['Detail', h('code', { class: 'wrap' }, f.detail)] : null,
  ]) : null;
  // A cancellation is said plainly, not as an error: someone chose to stop the run.
  const kind = f && f.reason === 'cancelled' ? 'info cancelled' : 'error';
  return h('div', { class: `msg ${kind} failure`, role: 'alert' }, h('p', { class: 'failure-text' }, message),
    parts ? h('details', {}, h('summary', {}, 'Details'), parts) : null);
}

/** showResult shows a run's result (execute's answer) in box. */
export function showResult(box, res) {
  clear(box,
    h('div', { class: `result-head ${statusKind(outcome(res))}` },
      outcomeBadge(res), ' ', h('strong', {}, res.command.name), ` on ${res.device.name} · ${fmtSeconds(res.execution_time)} · `,
      res.command_log_id ? link(`/ui/logs/${res.command_log_id}`, `log #${res.command_log_id}`) : null),
    syntaxBanner(res.syntax_error),
    !res.success && res.error_message && !(res.syntax_error && res.syntax_error.detected) ? failureBox(res.error_message, res.failure) : null,
    res.parsed_output && res.parsed_output.success ? h('section', {}, h('h3', {}, 'Parsed'), parsedTable(res.parsed_output)) : null,
    // A run that failed before the command has no output to show.
    res.output || res.success ? outputBlock(res.output, res.output_truncated) : null,
    res.parsed_output && !res.parsed_output.success && res.success ? parsedTable(res.parsed_output) : null);
}

export function registerDevice() {
  route('/ui/devices/:id', devicePage);
}
