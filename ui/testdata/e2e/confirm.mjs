// confirm.mjs: the runner asks before a config command runs, showing the exact lines the
// server will send, and starts with the right credential set: the one last chosen on the
// device, else the set made for the device's platform.

import { BASE, DEVICE_USER, DEVICE_PASS, DEVICE_ENABLE, page, step, check, shot, api, inPage, csrf } from './lib.mjs';

async function openDevice(name) {
  await page.goto(`${BASE}/ui/devices/`);
  await page.locator('table').getByRole('link', { name }).click();
  await page.getByRole('heading', { name: 'Run a command' }).waitFor();
}

const logCount = async (command) => (await api('GET', `/api/plugins/toolkit/command-logs/?command_id=${command}&limit=1`)).count;

export async function confirmAndSets() {
  await page.setViewportSize({ width: 1366, height: 900 });

  step('a config command asks first, with the exact lines the server renders; Go back sends nothing');
  const cmds = await api('GET', '/api/plugins/toolkit/commands/?name=Set%20interface%20description');
  check(cmds.count === 1, `the demo's config command: ${cmds.count}`);
  const cfg = cmds.results[0];
  const before = await logCount(cfg.id);
  await openDevice('demo-ios-1');
  await page.selectOption('#run-command', { label: cfg.name });
  await page.locator('[name=var_interface]').waitFor();
  await page.selectOption('[name=var_interface]', 'GigabitEthernet1/0/2');
  await page.fill('[name=var_description]', 'e2e desk 14');
  await page.selectOption('#run-set', { label: `Demo devices (${DEVICE_USER})` });
  await page.locator('.run-btn').click();
  const ask = page.getByRole('alertdialog');
  await ask.waitFor();
  const lines = await ask.locator('pre.confirm-lines').textContent();
  check(lines === 'interface GigabitEthernet1/0/2\n description e2e desk 14', `the lines shown: ${JSON.stringify(lines)}`);
  const dev = await api('GET', '/api/dcim/devices/?name=demo-ios-1');
  const v = await inPage(`/api/plugins/toolkit/commands/${cfg.id}/validate-variables/`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRFToken': await csrf() },
    body: JSON.stringify({ device_id: dev.results[0].id, variables: { interface: 'GigabitEthernet1/0/2', description: 'e2e desk 14' } }),
  });
  check(v.status === 200 && v.body.command.split('\n').filter((l) => l.trim()).join('\n') === lines, `validate-variables says ${JSON.stringify(v.body)}`);
  check(await page.evaluate(() => document.activeElement.textContent) === 'Send to device', 'Send has the focus');
  check((await page.locator('.run-state').textContent()) === '', 'nothing runs while the question is open');
  await shot('50-config-confirm');
  await ask.getByRole('button', { name: 'Go back' }).click();
  check(await ask.count() === 0, 'Go back closes the question');
  check(await logCount(cfg.id) === before, 'Go back sent nothing');

  step('an edit withdraws the question; Send runs the change as shown');
  await page.locator('.run-btn').click();
  await ask.waitFor();
  await page.fill('[name=var_description]', 'e2e desk 15');
  check(await ask.count() === 0, 'editing a variable withdraws the question about the old value');
  await page.locator('.run-btn').click();
  await ask.waitFor();
  check((await ask.locator('pre.confirm-lines').textContent()).endsWith(' description e2e desk 15'), 'the question shows the new value');
  await ask.getByRole('button', { name: 'Send to device' }).click();
  await page.locator('.result .result-head', { hasText: 'success' }).waitFor();
  check(await logCount(cfg.id) === before + 1, 'Send ran it once');
  const log = (await api('GET', `/api/plugins/toolkit/command-logs/?command_id=${cfg.id}&limit=1&ordering=-id`)).results[0];
  check(log.output.includes('description e2e desk 15'), `the device received the line shown: ${log.output}`);

  step('the runner starts with the set made for the platform, then with the last one chosen on the device');
  const eos = (await api('GET', '/api/dcim/devices/?name=demo-eos-1')).results[0];
  const r = await inPage('/ui/api/credential-sets/', {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRFToken': await csrf() },
    body: JSON.stringify({ name: 'EOS lab', username: DEVICE_USER, password: DEVICE_PASS, enable_secret: DEVICE_ENABLE, platforms: [eos.platform.id] }),
  });
  check(r.status === 201, `an EOS-only set: ${r.status} ${JSON.stringify(r.body)}`);
  const chosen = () => page.locator('#run-set option:checked').textContent();
  await openDevice('demo-eos-1');
  check(await chosen() === `Demo devices (${DEVICE_USER})`, `demo-eos-1 starts with the set chosen on it in an earlier scenario: ${await chosen()}`);
  await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('fieldkit.runSet.')).forEach((k) => localStorage.removeItem(k)));
  await page.reload();
  await page.getByRole('heading', { name: 'Run a command' }).waitFor();
  check(await chosen() === `EOS lab (${DEVICE_USER})`, `with no choice remembered demo-eos-1 starts with its platform's set: ${await chosen()}`);
  await page.selectOption('#run-set', { label: `Demo devices (${DEVICE_USER})` });
  await page.reload();
  await page.getByRole('heading', { name: 'Run a command' }).waitFor();
  check(await chosen() === `Demo devices (${DEVICE_USER})`, `after a reload demo-eos-1 keeps the last choice: ${await chosen()}`);
  await openDevice('demo-ios-1');
  check(await page.locator('#run-set option', { hasText: 'EOS lab' }).count() === 0, 'the EOS set is not offered for IOS');
}
