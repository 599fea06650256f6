// workflow.mjs: the main path through the web interface and the refusals on the way.

import { readFileSync } from 'node:fs';
import { BASE, ADMIN_PASSWORD, API_TOKEN, DEVICE_USER, DEVICE_PASS, DEVICE_ENABLE, page, step, check, api, shot, nav, inPage, csrf, login, pick } from './lib.mjs';

/** workflow is a newcomer's day: log in, set up, run, find the log, administer. */
export async function workflow() {
  step('root redirects to the login page');
  await page.goto(`${BASE}/`);
  await page.waitForURL(/\/ui\/login/);
  await page.locator('#login-user').waitFor();
  await shot('01-login');

  step('a wrong password is refused in place');
  await page.fill('#login-user', 'admin');
  await page.fill('#login-pass', 'wrong-password');
  await page.press('#login-pass', 'Enter');
  await page.locator('.msg.error').getByText('Invalid username or password.').waitFor();

  step('log in as admin (Enter submits)');
  await page.fill('#login-pass', ADMIN_PASSWORD);
  await page.press('#login-pass', 'Enter');
  await page.locator('.topbar .user').getByText('admin').waitFor();
  await page.getByRole('heading', { name: 'Devices' }).waitFor();
  await page.locator('table').getByRole('link', { name: 'demo-ios-1' }).waitFor();
  await shot('02-devices');

  step('a POST without X-CSRFToken is refused (403)');
  let r = await inPage('/api/plugins/toolkit/commands/', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'csrf-less', command: 'show clock', platforms: [1] }),
  });
  check(r.status === 403, `CSRF-less POST to the API: status ${r.status} ${JSON.stringify(r.body)}`);
  check(/CSRF/.test(r.body.detail || ''), `CSRF-less POST detail: ${JSON.stringify(r.body)}`);
  r = await inPage('/ui/api/credential-sets/', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'csrf-less', username: 'x', password: 'y' }),
  });
  check(r.status === 403, `CSRF-less POST to credential sets: status ${r.status}`);

  step('an API token cannot reach the credential endpoints (403)');
  r = await inPage('/ui/api/credential-sets/', { headers: { Authorization: `Token ${API_TOKEN}` }, credentials: 'omit' });
  check(r.status === 403, `token GET of credential sets: status ${r.status}`);
  check(r.body.detail === 'Credential sets are managed in the web interface only.', `token GET detail: ${JSON.stringify(r.body)}`);
  r = await inPage('/ui/api/credential-sets/', {
    method: 'POST', headers: { Authorization: `Token ${API_TOKEN}`, 'Content-Type': 'application/json', 'X-CSRFToken': await csrf() },
    body: JSON.stringify({ name: 'via-token', username: 'x', password: 'y' }),
  });
  check(r.status === 403, `token POST of a credential set (with the session cookie too): status ${r.status}`);

  step('create a credential set; its token is shown once');
  await nav('Credentials');
  await page.getByRole('link', { name: 'New credential set' }).click();
  const credForm = page.locator('form.form');
  await credForm.locator('[name=name]').fill('e2e lab switches');
  await credForm.locator('[name=username]').fill(DEVICE_USER);
  await credForm.locator('[name=password]').fill(DEVICE_PASS);
  await credForm.locator('[name=enable_secret]').fill(DEVICE_ENABLE);
  await pick(credForm, 'platforms', 'cisco', 'Cisco IOS');
  await credForm.locator('[name=enable_secret]').press('Enter');
  const tokenEl = page.locator('#new-token');
  await tokenEl.waitFor();
  const credToken = (await tokenEl.textContent()).trim();
  check(/^fkc_[A-Za-z0-9_-]{43}$/.test(credToken), `token format: ${credToken}`);
  await page.getByText('you will not see this token again', { exact: false }).waitFor();
  const setRow = page.locator('tr', { hasText: 'e2e lab switches' });
  await setRow.waitFor();
  check((await setRow.textContent()).includes(credToken.slice(0, 8)), 'the list shows the token prefix');
  await shot('03-credential-token-once');

  step('create a command with an interface variable; the editor flags the mismatch as you type');
  await nav('Commands');
  await page.getByRole('link', { name: 'New command' }).click();
  const cmdForm = page.locator('form.form');
  await cmdForm.locator('[name=name]').fill('E2E port status');
  await cmdForm.locator('[name=command]').fill('show ip interface brief | include <port>');
  await page.locator('.var-status').getByText('has no variable row').waitFor();
  await shot('04-command-mismatch');
  await page.locator('.chip.bad').getByRole('button', { name: 'add row' }).click();
  check(await page.locator('.var-status .chip.ok', { hasText: '<port>' }).count() === 1, 'the placeholder is matched after add row');
  const row = page.locator('.var-row').first();
  check(await row.locator('.v-type').inputValue() === 'inventory_interface', 'a <port> row guesses the interface type');
  await row.locator('.v-label').fill('Port');
  await cmdForm.locator('[name=command]').fill('show ip interface brief | include <port> <cr>');
  check(await page.locator('.var-status .field-error').count() === 0, '<cr> is literal, not a missing variable');
  await pick(cmdForm, 'platforms', 'cisco', 'Cisco IOS');
  await cmdForm.locator('[name=command]').fill('show ip interface brief | include <port>');
  await cmdForm.getByRole('button', { name: 'Create command' }).click();
  await page.getByRole('heading', { name: 'Command: E2E port status' }).waitFor();
  const cmdUrl = page.url();
  const cmdId = Number(cmdUrl.match(/commands\/(\d+)/)[1]);
  check(cmdId > 0, 'command id');

  step('statistics before running');
  await nav('Statistics');
  const totalCard = page.locator('.stat', { hasText: 'Total executions' }).locator('.stat-value');
  await totalCard.waitFor();
  const totalBefore = Number(await totalCard.textContent());

  step('open the device page, pick the interface, run against the simulated device');
  await nav('Devices');
  await page.locator('table').getByRole('link', { name: 'demo-ios-1' }).click();
  await page.getByRole('heading', { name: 'Run a command' }).waitFor();
  await page.selectOption('#run-command', { label: 'E2E port status' });
  const typeLabels = (await api('OPTIONS', '/api/plugins/toolkit/commands/')).actions.POST.command_type.choices.map((c) => c.display_name);
  const groups = await page.locator('#run-command optgroup').evaluateAll((gs) => gs.map((g) => g.label));
  check(groups.length > 0 && groups.every((g) => typeLabels.includes(g)), `the runner groups commands by the server's types: ${groups} of ${typeLabels}`);
  const portSel = page.locator('#var-port');
  await portSel.locator('option', { hasText: 'GigabitEthernet1/0/2' }).waitFor({ state: 'attached' });
  await portSel.selectOption('GigabitEthernet1/0/2');
  await page.selectOption('#run-set', { label: `e2e lab switches (${DEVICE_USER})` });
  check(await page.locator('#run-token').count() === 0, 'the runner never asks for a token: the set is chosen');
  const runBtn = page.locator('.run-btn');
  // Hold the request back a little so the running state can be seen.
  const slow = '**/ui/api/commands/*/run/';
  await page.route(slow, async (route) => { await new Promise((r) => setTimeout(r, 2000)); await route.continue(); });
  await runBtn.click();
  check(await runBtn.isDisabled(), 'the run button is disabled while running');
  check(await runBtn.locator('.spinner').count() === 1, 'a spinner shows while running');
  await page.locator('.run-state', { hasText: /connecting to demo-ios-1…/ }).waitFor();
  await shot('05a-device-running', false);
  const result = page.locator('.result .result-head');
  await result.waitFor();
  await page.unroute(slow);
  check(await runBtn.isEnabled(), 'the run button is enabled again');
  check((await result.textContent()).includes('success'), `result: ${await result.textContent()}`);
  const raw = await page.locator('pre.output').textContent();
  check(raw.includes('GigabitEthernet1/0/2') && !raw.includes('GigabitEthernet1/0/1'), `raw output: ${raw}`);
  const parsed = page.locator('.parsed table');
  await parsed.waitFor();
  const headers = await parsed.locator('th').allTextContents();
  check(headers.map((x) => x.toLowerCase()).includes('interface') && headers.map((x) => x.toLowerCase()).includes('status'), `parsed headers: ${headers}`);
  check(await page.locator('.parsed', { hasText: '1 record' }).count() === 1, 'one parsed record');
  check(await parsed.evaluate((t) => t.classList.contains('record')), 'one record is shown as field/value rows');
  check((await parsed.locator('tbody').textContent()).includes('GigabitEthernet1/0/2'), 'parsed row for GigabitEthernet1/0/2');
  // The recent history reloads after the run: wait for it rather than race it.
  await page.locator('.history li', { hasText: 'E2E port status' }).first().waitFor();
  await shot('05-device-run');

  step('a refusal from the server is shown in place (400 variable error)');
  await page.selectOption('#run-command', { label: 'E2E port status' });
  await portSel.waitFor();
  await runBtn.click();
  await page.locator('.field-error', { hasText: /required|missing|must/i }).first().waitFor();
  check(await page.locator('.run-state').textContent() === '', 'a run refused before it started says nothing about finishing');

  step('find the log and download its CSV');
  await nav('Logs');
  await pick(page.locator('form.filters'), 'command_id', 'E2E port', 'E2E port status');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/command_id=/);
  const logLink = page.locator('tbody tr').first().getByRole('link').first();
  await logLink.waitFor();
  check(await page.locator('tbody tr').count() === 1, 'one log for the new command');
  await shot('06-logs');
  await logLink.click();
  await page.getByRole('heading', { name: /Log #\d+: E2E port status on demo-ios-1/ }).waitFor();
  check((await page.locator('pre.output').textContent()).includes('GigabitEthernet1/0/2'), 'the log shows the output');
  check(await page.locator('.parsed table').count() === 1, 'the log shows the parsed data');
  await shot('07-log-detail');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
  check(/^command-log-\d+\.csv$/.test(download.suggestedFilename()), `one log's file is named by its log: ${download.suggestedFilename()}`);
  const csv = readFileSync(await download.path(), 'utf8');
  const lines = csv.trim().split(/\r?\n/);
  check(lines[0].startsWith('id,created,username,device_id,device,command_id,command,command_type,success,execution_duration,error_message,sent_command,variables,credential_set_id,credential_set,source,client_address,notes,site_id,site,output'), `CSV header: ${lines[0]}`);
  check(csv.includes('E2E port status') && csv.includes('demo-ios-1') && csv.includes('GigabitEthernet1/0/2'), `CSV content: ${csv.slice(0, 400)}`);
  check(!/E2E port status[\s\S]*\n\d+,[^\n]*E2E port status/.test(csv), 'the CSV holds that one log only');

  step('the run is counted in the statistics');
  await nav('Statistics');
  await totalCard.waitFor();
  const totalAfter = Number(await totalCard.textContent());
  check(totalAfter === totalBefore + 1, `total executions ${totalBefore} → ${totalAfter}`);
  check(await page.locator('svg.chart rect.bar-ok').count() >= 1, 'the 24-hour chart has bars');
  await shot('08-statistics');

  step('parse an output without a device: the lookup picks the template; a pasted template runs instead');
  await nav('Parse');
  await page.getByRole('heading', { name: 'Parse an output' }).waitFor();
  // the platform list comes from the inventory
  await page.locator('#parse-platforms option[value="cisco_ios"]').waitFor({ state: 'attached' });
  const parseForm = page.locator('form.form');
  await parseForm.locator('[name=platform]').fill('cisco_ios');
  await parseForm.locator('[name=command]').fill('sh ip int br');
  await parseForm.locator('[name=output]').fill([
    'Interface              IP-Address      OK? Method Status                Protocol',
    'Vlan1                  unassigned      YES NVRAM  administratively down down',
    'GigabitEthernet0/0     192.0.2.10      YES DHCP   up                    up',
  ].join('\n'));
  await parseForm.getByRole('button', { name: 'Parse' }).click();
  const parsedOut = page.locator('.parse-result .parsed table');
  await parsedOut.waitFor();
  let heads = await parsedOut.locator('th').allTextContents();
  check(heads.join(',') === 'interface,ip_address,status,proto', `columns in the template's order: ${heads}`);
  check(await parsedOut.locator('tbody tr').count() === 2, 'two records');
  const facts = await page.locator('.parse-result dl').textContent();
  check(facts.includes('cisco_ios_show_ip_interface_brief.textfsm') && facts.includes('built into FieldKit'), `template and source: ${facts}`);
  await shot('09a-parse-lookup');
  await parseForm.locator('[name=template]').fill('Value NAME (\\S+)\nValue ADDRESS (\\d\\S+)\n\nStart\n  ^${NAME}\\s+${ADDRESS} -> Record\n');
  await parseForm.getByRole('button', { name: 'Parse' }).click();
  await page.locator('.parse-result dl', { hasText: 'this request' }).waitFor();
  heads = await parsedOut.locator('th').allTextContents();
  check(heads.join(',') === 'name,address', `a pasted template's columns: ${heads}`);
  check((await parsedOut.locator('tbody').textContent()).includes('192.0.2.10'), 'the pasted template found the address');
  await parseForm.locator('[name=template]').fill('Value NAME (\\S+\n\nStart\n  ^${NAME}\n');
  await parseForm.getByRole('button', { name: 'Parse' }).click();
  await parseForm.locator('.field-error', { hasText: /request/ }).waitFor();
  check(await page.locator('.parse-result').isHidden(), 'a refused parse hides the last result');
  await shot('09b-parse-template-error');

  step('inventory: a VLAN through the generic pages; a server 400 lands next to its field');
  await nav('VLANs');
  await page.getByRole('link', { name: 'New VLAN' }).click();
  const vlanForm = page.locator('form.form');
  await vlanForm.locator('[name=vid]').fill('5000');
  await vlanForm.locator('[name=name]').fill('E2E-VLAN');
  await pick(vlanForm, 'site', 'demo', 'Demo Lab');
  await vlanForm.locator('[name=name]').press('Enter');
  const vidError = vlanForm.locator('.field:has([name=vid]) .field-error');
  await vidError.filter({ hasText: /\S/ }).waitFor();
  check(await vlanForm.locator('[name=vid]').getAttribute('aria-invalid') === 'true', 'the vid field is marked invalid');
  await shot('12-vlan-field-error');
  await vlanForm.locator('[name=vid]').fill('999');
  await vlanForm.getByRole('button', { name: 'Create VLAN' }).click();
  await page.getByRole('heading', { name: /^VLAN: .*E2E-VLAN/ }).waitFor();
  await page.getByRole('link', { name: 'Edit' }).click();
  await page.locator('form.form [name=name]').fill('E2E-VLAN-2');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('heading', { name: /^VLAN: .*E2E-VLAN-2/ }).waitFor();
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.locator('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('heading', { name: 'VLANs' }).waitFor();
  await page.locator('table').waitFor();
  check(await page.locator('tr', { hasText: 'E2E-VLAN-2' }).count() === 0, 'the VLAN is gone from the list');

  step('permission constraints are checked as JSON while typing');
  await nav('Permissions');
  await page.getByRole('link', { name: 'New permission' }).click();
  const constraints = page.locator('form.form [name=constraints]');
  await constraints.fill('{"platforms__slug": ');
  await page.locator('.field:has([name=constraints]) .field-error', { hasText: 'Not valid JSON' }).waitFor();
  await constraints.fill('{"platforms__slug": "cisco_ios"}');
  check(await page.locator('.field:has([name=constraints]) .field-error').textContent() === '', 'valid JSON clears the error');

  step('the token is not shown again after a reload');
  await page.goto(`${BASE}/ui/credentials/`);
  await page.locator('tr', { hasText: 'e2e lab switches' }).waitFor();
  check(await page.locator('#new-token').count() === 0, 'no token after reload');
  check(!(await page.content()).includes(credToken), 'the token is nowhere in the page');
  await shot('09-credentials');

  step('regenerating a token asks first, shows the new one once and kills the old one');
  await page.locator('tr', { hasText: 'e2e lab switches' }).getByRole('button', { name: 'Regenerate token' }).click();
  const dialog = page.locator('dialog[open]');
  await dialog.getByText('stops working at once').waitFor();
  await shot('09a-regenerate-confirm', false);
  await dialog.getByRole('button', { name: 'Regenerate token' }).click();
  await page.locator('#new-token').waitFor();
  const newToken = (await page.locator('#new-token').textContent()).trim();
  check(newToken !== credToken && newToken.startsWith('fkc_'), 'a different token');
  r = await inPage(`/api/plugins/toolkit/commands/${cmdId}/execute/`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRFToken': await csrf() },
    body: JSON.stringify({ device_id: 1, credential_token: credToken, variables: { port: 'GigabitEthernet1/0/1' } }),
  });
  check(r.status === 400 && JSON.stringify(r.body).includes('Invalid credential token.'), `the old token is dead: ${r.status} ${JSON.stringify(r.body)}`);

  step('after a reload the runner still runs with the chosen set; a 429 shows its reason and retry time');
  await nav('Devices');
  await page.locator('table').getByRole('link', { name: 'demo-eos-1' }).click();
  await page.selectOption('#run-command', { label: 'Show version' });
  await page.selectOption('#run-set', { label: `Demo devices (${DEVICE_USER})` });
  // The demo runs here with a limit of 10 a minute (e2e_test.go), so that it is met
  // in a few runs; the default, 60, a person never meets.
  let rateLimited = false;
  for (let i = 0; i < 15 && !rateLimited; i++) {
    await runBtn.click();
    await page.waitForFunction(() => !document.querySelector('.run-btn').disabled || document.querySelector('.form-top .msg.rate-limited'));
    rateLimited = await page.locator('.form-top .msg', { hasText: 'Rate limit reached' }).count() === 1;
  }
  check(rateLimited, 'the device hit its rate limit');
  const banner = await page.locator('.form-top .msg').textContent();
  check(/successful commands in the last minute/.test(banner), `429 banner: ${banner}`);
  const next = /The next run on demo-eos-1 is possible at (\d\d:\d\d:\d\d \S+) \(in (\d+) s\)/.exec(banner);
  check(next && Number(next[2]) >= 1 && Number(next[2]) <= 60, `the banner says when the next run is possible: ${banner}`);
  const held = await page.locator('.run-btn').evaluate((b) => ({ disabled: b.disabled, text: b.textContent }));
  check(held.disabled && /^Run \(in \d+ s\)$/.test(held.text), `Run waits for the next slot: ${JSON.stringify(held)}`);
  await page.waitForFunction((n) => {
    const m = /\(in (\d+) s\)/.exec(document.querySelector('.form-top .msg .next-run')?.textContent || '');
    return m && Number(m[1]) < n;
  }, Number(next[2]));
  check((await page.locator('.form-top .msg .next-run').textContent()).includes(next[1]), 'the time stays, the seconds count down');
  await page.locator('.card', { hasText: 'Rate limit' }).getByText(/^\d+ \/ \d+$/).waitFor();
  await page.locator('.card', { hasText: 'Rate limit' }).getByText(/Limit reached: the next run is possible at \d\d:\d\d:\d\d \S+ \(in \d+ s\)/).waitFor();
  await shot('13-rate-limited');

  step('a user without execute_config: the server refuses a config command');
  const user = await api('POST', '/api/users/users/', { username: 'e2e-tech', password: 'e2e-tech-password-1' });
  await api('POST', '/api/users/permissions/', {
    name: 'e2e show only', object_types: ['netbox_toolkit_plugin.command', 'netbox_toolkit_plugin.commandlog', 'dcim.device', 'dcim.platform', 'dcim.site', 'dcim.interface'],
    actions: ['view', 'execute_show'], users: [user.id],
  });
  const cmds = await api('GET', '/api/plugins/toolkit/commands/?command_type=config&platform=cisco_ios');
  check(cmds.count >= 1, 'the demo has a config command for Cisco IOS');
  const configCmd = cmds.results[0];
  await page.locator('#logout').click();
  await page.waitForURL(/\/ui\/login/);
  await login('e2e-tech', 'e2e-tech-password-1');
  check(await page.locator('#nav').getByRole('link', { name: 'Users' }).count() === 0, 'no admin pages for a plain user');
  await page.goto(`${BASE}/ui/devices/1`);
  await page.getByRole('heading', { name: 'Run a command' }).waitFor();
  const offered = await page.locator('#run-command option').allTextContents();
  check(!offered.includes(configCmd.name), `the runner does not offer ${configCmd.name}: ${offered}`);
  r = await inPage(`/api/plugins/toolkit/commands/${configCmd.id}/execute/`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRFToken': await csrf() },
    body: JSON.stringify({ device_id: 1, credential_token: credToken, variables: { interface: 'GigabitEthernet1/0/1', description: 'x' } }),
  });
  check(r.status === 403, `config execute without execute_config: status ${r.status} ${JSON.stringify(r.body)}`);
  check(r.body.detail === 'You do not have permission to execute config commands.', `detail: ${JSON.stringify(r.body)}`);
  await shot('10-device-show-only');

  step('tablet width: the device page stays usable');
  await page.setViewportSize({ width: 800, height: 1100 });
  await page.reload();
  await page.getByRole('heading', { name: 'Run a command' }).waitFor();
  await page.getByRole('button', { name: /Menu/ }).waitFor();
  await shot('11-device-tablet');

}

