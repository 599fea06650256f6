// notes.mjs: why a command ran. The device page's runner and the page that runs on
// several devices take notes; the device's history, the log and the command's history
// show them; the log's author edits them in place; the list's search and the CSV find
// them.

import { BASE, ADMIN_PASSWORD, page, step, check, shot, login, api, inPage } from './lib.mjs';
import { asAuditor } from './changes.mjs';

export async function notes() {
  await asAuditor(); // exempt from the rate limit the other scenarios run into
  const dev = (await api('GET', '/api/dcim/devices/?name=demo-eos-1')).results[0];
  const cmd = await api('POST', '/api/plugins/toolkit/commands/', {
    name: 'E2E notes clock', command: 'show clock', command_type: 'show', platforms: [dev.platform.id] });
  const note = 'pre-change OSPF config, CHG7731';

  step('the runner takes notes; the run\'s log and the device\'s history show them');
  await page.goto(`${BASE}/ui/devices/${dev.id}`);
  await page.getByRole('heading', { name: 'Run a command' }).waitFor();
  await page.selectOption('#run-command', { label: cmd.name });
  await page.locator('#run-set option', { hasText: 'auditor devices' }).waitFor({ state: 'attached' });
  await page.selectOption('#run-set', { index: await page.locator('#run-set option').evaluateAll((os) => os.findIndex((o) => o.textContent.startsWith('auditor devices'))) });
  await page.getByLabel(/^Notes/).fill(note);
  await page.locator('.run-btn').click();
  const head = page.locator('.result .result-head', { hasText: 'success' });
  await head.waitFor();
  const logId = Number(/log #(\d+)/.exec(await head.textContent())[1]);
  const hist = page.locator('.card', { hasText: 'Recent history' });
  await hist.locator('li', { hasText: note }).waitFor();
  check((await hist.locator('li').first().textContent()).includes(note), 'the newest run in the history shows its notes');
  await shot('70-runner-notes');

  step('the log shows the notes; its author edits them in place');
  await page.goto(`${BASE}/ui/logs/${logId}`);
  const card = page.locator('.notes-card');
  check((await card.locator('.log-notes').textContent()) === note, 'the log shows its notes');
  await card.getByRole('button', { name: 'Edit notes' }).click();
  await card.getByLabel('Notes').fill(`${note}; rolled back at 02:10`);
  await card.getByRole('button', { name: 'Save notes' }).click();
  await card.getByText('Notes saved.').waitFor();
  await page.reload();
  check((await page.locator('.notes-card .log-notes').textContent()) === `${note}; rolled back at 02:10`, 'the edit is kept');
  const log = await api('GET', `/api/plugins/toolkit/command-logs/${logId}/`);
  check(log.notes === `${note}; rolled back at 02:10` && log.success && log.sent_command === 'show clock', `the log through the API: ${JSON.stringify(log.notes)}`);
  await shot('71-log-notes');
  await page.getByRole('link', { name: /history of E2E notes clock on demo-eos-1/ }).click();
  await page.getByRole('heading', { name: 'E2E notes clock on demo-eos-1' }).waitFor();
  check((await page.locator('tbody tr').first().textContent()).includes('rolled back at 02:10'), 'the command\'s history shows the run\'s notes');

  step('the list\'s search finds a word of the notes; the CSV carries them');
  await page.goto(`${BASE}/ui/logs/?q=CHG7731`);
  await page.locator(`tbody a[href="/ui/logs/${logId}"]`).waitFor();
  const csv = await inPage(`/api/plugins/toolkit/command-logs/export/?format=csv&id=${logId}`, {});
  const [header, row] = csv.body.trim().split('\r\n');
  check(header.split(',').includes('notes') && row.includes('rolled back at 02:10'), `the CSV: ${csv.body.slice(0, 400)}`);

  step('run on several devices: the notes go on every device\'s log');
  await page.goto(`${BASE}/ui/run`);
  await page.selectOption('#bulk-command', { label: cmd.name });
  await page.fill('#bulk-q', 'demo-eos-1');
  await page.waitForFunction(() => document.querySelectorAll('.bulk-device-list li').length === 1, null, { timeout: 30000 });
  await page.selectOption('#bulk-set', { index: await page.locator('#bulk-set option').evaluateAll((os) => os.findIndex((o) => o.textContent.startsWith('auditor devices'))) });
  await page.getByLabel(/^Notes/).fill('nightly audit (e2e)');
  await page.getByRole('button', { name: 'Run on 1 device' }).click();
  const panel = page.locator('.bulk-panel .result-head', { hasText: 'success' });
  await panel.waitFor({ timeout: 60000 });
  const bulkLog = Number(/log #(\d+)/.exec(await panel.textContent())[1]);
  check((await api('GET', `/api/plugins/toolkit/command-logs/${bulkLog}/`)).notes === 'nightly audit (e2e)', 'the bulk run\'s log keeps the notes');
  await api('DELETE', `/api/plugins/toolkit/commands/${cmd.id}/`);
  await login('admin', ADMIN_PASSWORD);
}
