// bulkrun.js: one command on several devices. Pick the command, narrow the devices by
// site, platform or tag, then watch each device's run live, as on a device page: every
// run goes through the same streamed endpoint (the same checks, rate limit and log),
// a few at a time.

import { h, add, clear, link, okBadge, outcomeBadge, outcome, loading, pageHead, errorBox, spinner, notice, refText, fmtSeconds, clockTime } from './dom.js';
import { get, post, stream, qs, T, ApiError, getAll } from './api.js';
import { route } from './router.js';
import { can } from './session.js';
import { picker } from './picker.js';
import { listCredentialSets } from './credentials.js';
import { commandText, typeBadge } from './commands.js';
import { liveOutput, showResult, notesField, NOTES_MAX } from './device.js';

const CMD_TYPE = 'netbox_toolkit_plugin.command';
const MAX_DEVICES = 100; // a page of devices; more is a sign the filters are too wide
const AT_ONCE = 4; // runs streaming at once: each holds one of the browser's connections

async function bulkPage(main) {
  clear(main, pageHead('Run on several devices'), loading());
  let cmds, sets;
  try {
    [cmds, sets] = await Promise.all([getAll(`${T}/commands/`).then((x) => x.rows), listCredentialSets()]);
  } catch (err) {
    clear(main, pageHead('Run on several devices'), errorBox(err));
    return;
  }
  const runnable = cmds.filter((c) => can(CMD_TYPE, `execute_${c.command_type}`));
  sets = sets.filter((s) => s.is_active);
  clear(main, pageHead('Run on several devices'),
    h('p', { class: 'muted' }, 'One command on every device you pick: each runs as it would from its device page, with its own live output, log and rate limit.'));
  if (!runnable.length) {
    main.append(notice('You may not execute any command.', 'warn'));
    return;
  }

  const cmdSel = h('select', { id: 'bulk-command' }, h('option', { value: '' }, 'Choose…'),
    runnable.map((c) => h('option', { value: c.id }, c.name)));
  const cmdInfo = h('div', { class: 'bulk-command-info' });
  const varsBox = h('div', { class: 'vars' });
  const filters = h('div', { class: 'filters bulk-filters' });
  const devBox = h('div', { class: 'bulk-devices', 'aria-live': 'polite' });
  const setSel = h('select', { id: 'bulk-set' }, sets.map((s) => h('option', { value: s.id }, `${s.name} (${s.username})`)));
  const timeout = h('input', { id: 'bulk-timeout', type: 'number', min: 5, max: 300, value: 30 });
  const notes = h('textarea', { id: 'bulk-notes', name: 'notes', rows: 2, maxlength: NOTES_MAX, placeholder: 'e.g. nightly audit, CHG1234', 'aria-describedby': 'bulk-notes-help' });
  const runBtn = h('button', { type: 'button', class: 'btn primary bulk-run-btn', disabled: true }, 'Run');
  const top = h('div', { class: 'form-top', 'aria-live': 'assertive' });
  const results = h('section', { class: 'bulk-results', 'aria-live': 'polite' });
  let current = null;
  let devices = [];

  const pickers = {};
  const pick = (name, label, path) => {
    const p = picker({ name, id: `bulk-${name}`, ref: { path }, empty: 'Any' });
    p.addEventListener('change', () => loadDevices());
    pickers[name] = p;
    return h('div', { class: 'filter' }, h('label', { for: `bulk-${name}` }, label), p);
  };
  const q = h('input', { id: 'bulk-q', type: 'search', placeholder: 'name, address…' });
  let qTimer = 0;
  q.addEventListener('input', () => { clearTimeout(qTimer); qTimer = setTimeout(loadDevices, 300); });
  add(filters, pick('site_id', 'Site', '/api/dcim/sites/'), pick('platform_id', 'Platform', '/api/dcim/platforms/'),
    pick('tag_id', 'Tag', '/api/extras/tags/'), h('div', { class: 'filter' }, h('label', { for: 'bulk-q' }, 'Search'), q));

  main.append(
    h('section', { class: 'card' }, h('h2', {}, '1. Command'),
      h('div', { class: 'field' }, h('label', { for: 'bulk-command' }, 'Command'), cmdSel), cmdInfo, varsBox),
    h('section', { class: 'card' }, h('h2', {}, '2. Devices'), filters, devBox),
    h('section', { class: 'card' }, h('h2', {}, '3. Run'), top,
      h('div', { class: 'row2' },
        h('div', { class: 'field' }, h('label', { for: 'bulk-set' }, 'Credential set'), setSel,
          sets.length ? null : h('div', { class: 'help' }, link('/ui/credentials/new', 'Create a credential set →'))),
        h('div', { class: 'field narrow' }, h('label', { for: 'bulk-timeout' }, 'Timeout (s)'), timeout)),
      notesField(notes, null),
      h('div', { class: 'actions' }, runBtn)),
    results);

  const chosen = () => devices.filter((d) => devBox.querySelector(`input[data-device="${d.id}"]`)?.checked);
  const ready = () => {
    const n = chosen().length;
    runBtn.disabled = !current || !n || !sets.length || !!varsBox.querySelector('.blocked');
    runBtn.textContent = n ? `Run on ${n} device${n === 1 ? '' : 's'}` : 'Run';
  };

  cmdSel.addEventListener('change', () => {
    current = runnable.find((c) => String(c.id) === cmdSel.value) || null;
    clear(cmdInfo);
    clear(varsBox);
    if (current) {
      cmdInfo.append(typeBadge(current.command_type), commandText(current.command),
        h('p', { class: 'help' }, `For ${current.platforms.map((p) => p.name).join(', ')}: only devices of these platforms are listed.`));
      varsBox.append(...current.variables.map(varField));
    }
    loadDevices();
  });

  let loads = 0;
  async function loadDevices() {
    const mine = ++loads; // a later change's answer wins over an earlier one's
    if (!current) { clear(devBox, h('p', { class: 'muted' }, 'Choose a command first: its platforms decide which devices can run it.')); ready(); return; }
    const val = (name) => String(pickers[name].value() ?? '');
    const plat = val('platform_id');
    const platforms = current.platforms.map((p) => String(p.id));
    if (plat && !platforms.includes(plat)) {
      devices = [];
      clear(devBox, h('p', { class: 'empty' }, `${current.name} does not run on that platform.`));
      ready();
      return;
    }
    clear(devBox, loading());
    try {
      const page = await get(`/api/dcim/devices/${qs({ platform_id: plat || platforms, site_id: val('site_id'), tag_id: val('tag_id'),
        q: q.value.trim(), has_primary_ip: 'true', limit: MAX_DEVICES, ordering: 'name' })}`);
      if (mine !== loads) return;
      devices = page.results;
      renderDevices(page.count);
    } catch (err) {
      clear(devBox, errorBox(err));
    }
    ready();
  }

  function renderDevices(count) {
    if (!devices.length) { clear(devBox, h('p', { class: 'empty' }, 'No device with an address matches these filters.')); return; }
    const all = h('input', { type: 'checkbox', id: 'bulk-all', checked: true, onchange: () => {
      for (const c of devBox.querySelectorAll('input[data-device]')) c.checked = all.checked;
      ready();
    } });
    clear(devBox,
      h('p', { class: 'bulk-count' }, h('label', { class: 'check' }, all, ` all ${devices.length}`),
        count > devices.length ? h('span', { class: 'muted' }, ` · the first ${devices.length} of ${count}: narrow the filters to reach the others`) : null),
      h('ul', { class: 'bulk-device-list' }, devices.map((d) => h('li', {},
        h('label', { class: 'check' }, h('input', { type: 'checkbox', checked: true, 'data-device': d.id, onchange: ready }), ` ${d.name}`),
        h('span', { class: 'muted' }, ` ${refText(d.site)} · ${refText(d.platform)} · ${d.primary_ip ? d.primary_ip.address : ''}`)))));
  }

  runBtn.addEventListener('click', async () => {
    clear(top);
    const targets = chosen();
    const variables = {};
    for (const el of varsBox.querySelectorAll('input[name]')) if (el.value !== '') variables[el.name] = el.value;
    const body = { credential_set_id: Number(setSel.value), variables, timeout: Number(timeout.value) || 30, notes: notes.value.trim() };
    if (current.command_type === 'config') {
      let rendered;
      try {
        rendered = await post(`${T}/commands/${current.id}/validate-variables/`, { device_id: targets[0].id, variables });
      } catch (err) {
        top.append(errorBox(err, 'Not run'));
        return;
      }
      if (!await confirmChange(top, rendered.command, targets.length)) return;
    }
    runAll(current, targets, body);
  });

  /** runAll runs cmd on every target, AT_ONCE at a time, each in its own live panel. */
  async function runAll(cmd, targets, body) {
    runBtn.disabled = true;
    const summary = h('p', { class: 'bulk-summary', role: 'status' });
    const cancelAll = h('button', { type: 'button', class: 'btn danger small' }, 'Cancel all');
    const panels = targets.map((d) => devicePanel(d));
    let stopped = false;
    const count = () => {
      const done = panels.filter((p) => p.outcome);
      const ok = done.filter((p) => p.outcome === 'success').length;
      const off = done.filter((p) => p.outcome === 'cancelled' || p.outcome === 'skipped').length;
      summary.textContent = `${cmd.name}: ${done.length} of ${panels.length} done · ${ok} successful · ${done.length - ok - off} failed or not run · ${off} cancelled`;
    };
    cancelAll.addEventListener('click', () => { stopped = true; cancelAll.disabled = true; panels.forEach((p) => p.cancel()); });
    clear(results, h('div', { class: 'page-head' }, h('h2', {}, `Runs of ${cmd.name}`), cmd.command_type === 'config' ? null : cancelAll),
      summary, panels.map((p) => p.el));
    count();
    results.scrollIntoView({ block: 'start' });
    let next = 0;
    const worker = async () => {
      while (next < panels.length) {
        const p = panels[next++];
        if (stopped) { p.skip(); count(); continue; }
        await p.run(cmd, body);
        count();
      }
    };
    await Promise.all(Array.from({ length: Math.min(AT_ONCE, panels.length) }, worker));
    cancelAll.remove();
    ready();
  }
}

/** varField is a text input for one of the command's variables, the same on every device. */
function varField(v) {
  const id = `bulk-var-${v.name}`;
  if (v.variable_type !== 'text') {
    return h('div', { class: 'field blocked' }, notice(`${v.display_name || v.name} takes a value from each device's own ${v.variable_type.replace('inventory_', '')}s: run this command from a device page.`, 'warn'));
  }
  return h('div', { class: 'field' }, h('label', { for: id }, v.display_name || v.name, v.required ? h('span', { class: 'req' }, ' *') : null),
    h('input', { id, name: v.name, value: v.default_value || '', maxlength: 500, autocomplete: 'off' }),
    v.help_text ? h('div', { class: 'help' }, v.help_text) : null);
}

/** confirmChange asks before a config command goes to n devices, showing its lines. */
function confirmChange(box, text, n) {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return new Promise((resolve) => {
    const send = h('button', { type: 'button', class: 'btn primary send-btn' }, `Send to ${n} device${n === 1 ? '' : 's'}`);
    const back = h('button', { type: 'button', class: 'btn back-btn' }, 'Go back');
    const ask = h('div', { class: 'confirm-change msg warn', role: 'alertdialog' },
      h('h3', {}, `Change the configuration of ${n} device${n === 1 ? '' : 's'}?`),
      h('p', {}, 'These lines go to each device in configuration mode, exactly as shown:'),
      h('pre', { class: 'output wrap confirm-lines' }, lines.join('\n')),
      h('div', { class: 'actions' }, send, back));
    send.addEventListener('click', () => { ask.remove(); resolve(true); });
    back.addEventListener('click', () => { ask.remove(); resolve(false); });
    box.append(ask);
    send.focus();
  });
}

/**
 * devicePanel is one device's run: waiting, then its output as it arrives with a Cancel
 * button (show commands), then its result, as the device page shows it.
 */
function devicePanel(d) {
  const state = h('span', { class: 'run-state' }, 'waiting');
  const badgeBox = h('span', { class: 'bulk-badge' });
  const resultBox = h('div', { class: 'result' });
  const actions = h('span', { class: 'actions' });
  const el = h('section', { class: 'card bulk-panel', 'data-device': d.id },
    h('div', { class: 'bulk-panel-head' }, badgeBox, h('strong', {}, link(`/ui/devices/${d.id}`, d.name)), ' ', state, actions), resultBox);
  let runId = null, stop = null;
  const panel = {
    el, outcome: null,
    cancel() {
      if (stop) stop();
      else if (!panel.outcome) panel.skip();
    },
    skip() {
      panel.outcome = 'skipped';
      state.textContent = 'not run: cancelled before it started';
    },
    async run(cmd, request) {
      if (panel.outcome) return;
      const live = liveOutput();
      let started = null;
      const seconds = () => (performance.now() - started) / 1000;
      const tick = () => {
        state.textContent = started == null ? `connecting to ${d.name}…`
          : `running… ${Math.floor(seconds())} s · ${live.lines()} line${live.lines() === 1 ? '' : 's'} so far`;
      };
      tick();
      const timer = setInterval(tick, 250);
      badgeBox.replaceChildren(spinner());
      try {
        const res = await stream(`/ui/api/commands/${cmd.id}/run/`, { ...request, device_id: d.id }, {
          started: (ev) => {
            started = performance.now();
            runId = ev.run_id;
            if (ev.cancellable) {
              const btn = h('button', { type: 'button', class: 'btn danger small cancel-btn' }, 'Cancel');
              stop = async () => {
                btn.disabled = true;
                try { await post(`/ui/api/runs/${runId}/cancel/`); } catch (err) { actions.replaceChildren(errorBox(err, 'Not cancelled')); }
              };
              btn.addEventListener('click', stop);
              actions.replaceChildren(btn);
            }
            clear(resultBox, live.el);
          },
          output: (ev) => live.append(ev.text),
          skipped: (ev) => live.append(`\n[… ${ev.bytes} bytes not shown while running; the full output follows]\n`),
        });
        showResult(resultBox, res);
        panel.outcome = outcome(res);
        badgeBox.replaceChildren(outcomeBadge(res));
        const f = res.failure;
        state.textContent = f && f.reason === 'cancelled' ? `cancelled after ${seconds().toFixed(1)} s`
          : f && ['connect', 'login', 'enable'].includes(f.phase) ? `not run: the ${f.phase} step failed after ${seconds().toFixed(1)} s`
            : `finished in ${fmtSeconds(res.execution_time)}`;
      } catch (err) {
        panel.outcome = 'refused';
        badgeBox.replaceChildren(okBadge(false));
        state.textContent = started == null ? 'not run' : `no result after ${seconds().toFixed(1)} s`;
        clear(resultBox, refusal(err, d));
      } finally {
        clearInterval(timer);
        stop = null;
        actions.replaceChildren();
      }
    },
  };
  return panel;
}

/** refusal says why the server did not run the command on a device. */
function refusal(err, d) {
  if (err instanceof ApiError && err.status === 429) {
    const det = (err.body && err.body.details) || {};
    const wait = err.retryAfter ?? det.retry_after_seconds;
    return h('div', { class: 'msg error', role: 'alert' }, h('strong', {}, 'Rate limit reached. '), det.reason || err.message,
      wait != null ? h('p', {}, `The next run on ${d.name} is possible at ${clockTime(new Date(Date.now() + wait * 1000))} (in ${wait} s).`) : null);
  }
  return errorBox(err, 'Not run');
}

export function registerBulkRun() {
  route('/ui/run', bulkPage);
}
