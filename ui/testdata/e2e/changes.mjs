// changes.mjs: what changed. A VLAN added between two runs of "VLANs" shows on the
// log's "Compare with previous" page side by side, its words marked, and in the parsed
// records; the command's history on the device marks the run whose output changed.

import { BASE, ADMIN_PASSWORD, DEVICE_USER, DEVICE_PASS, DEVICE_ENABLE, page, step, check, shot, login, api, inPage, csrf } from './lib.mjs';

// These scenarios run as "auditor", whom the demo server started by ui/e2e_test.go
// exempts from the rate limit (rate_limit.bypass_users): they run a dozen commands on
// a device that the other scenarios have already run up to its limit.
const AUDITOR = 'auditor';
const AUDITOR_PASSWORD = 'Audit-e2e-41-pass';
let auditorSet = 0;

/** asAuditor logs in as the auditor (made on first use, with a credential set of their own). */
export async function asAuditor() {
  if (!auditorSet) {
    await api('POST', '/api/users/users/', { username: AUDITOR, password: AUDITOR_PASSWORD, is_superuser: true });
  }
  await login(AUDITOR, AUDITOR_PASSWORD);
  if (!auditorSet) {
    const r = await inPage('/ui/api/credential-sets/', {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRFToken': await csrf() },
      body: JSON.stringify({ name: 'auditor devices', username: DEVICE_USER, password: DEVICE_PASS, enable_secret: DEVICE_ENABLE }),
    });
    check(r.status === 201, `the auditor's set: ${r.status} ${JSON.stringify(r.body)}`);
    auditorSet = r.body.id;
  }
}

/** execute runs a command on a device as the logged-in auditor, through the API with the session. */
export async function execute(cmd, device) {
  const r = await inPage(`/api/plugins/toolkit/commands/${cmd}/execute/`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRFToken': await csrf() },
    body: JSON.stringify({ device_id: device, credential_set_id: auditorSet }),
  });
  check(r.status === 200 && r.body.success, `execute ${cmd}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.command_log_id;
}

export async function changes() {
  await asAuditor();
  const dev = (await api('GET', '/api/dcim/devices/?name=demo-eos-1')).results[0];
  const vlans = await api('POST', '/api/plugins/toolkit/commands/', {
    name: 'E2E VLANs', command: 'show vlan', command_type: 'show', platforms: [dev.platform.id] });
  const add = await api('POST', '/api/plugins/toolkit/commands/', {
    name: 'Add VLAN 77', command: 'vlan 77\n name CAMERAS', command_type: 'config', platforms: [dev.platform.id] });
  const run = (cmd) => execute(cmd, dev.id);

  step('compare with previous: the added VLAN shows side by side and in the parsed records');
  await run(vlans.id);
  await run(add.id);
  const added = await run(vlans.id);
  await page.goto(`${BASE}/ui/logs/${added}`);
  await page.getByRole('link', { name: 'Compare with previous' }).click();
  await page.getByRole('heading', { name: new RegExp(`Log #${added} compared with #\\d+`) }).waitFor();
  check(await page.locator('table.diff tr.added td.code.ins', { hasText: 'CAMERAS' }).count() === 1, 'the new VLAN shows on the right alone');
  let records = await page.locator('.records-diff').textContent();
  check(records.includes('Added (1)') && records.includes('CAMERAS') && !records.includes('Removed'), `the records card lists the VLAN: ${records}`);
  await shot('50-compare-added');

  step('a renamed VLAN: the changed line side by side, the changed word marked on each side');
  const rename = await api('POST', '/api/plugins/toolkit/commands/', {
    name: 'Rename VLAN 77', command: 'vlan 77\n name DOORS', command_type: 'config', platforms: [dev.platform.id] });
  await run(rename.id);
  const last = await run(vlans.id);
  await page.goto(`${BASE}/ui/logs/${last}/diff?against=previous`);
  await page.getByRole('heading', { name: new RegExp(`Log #${last} compared with #${added}`) }).waitFor();
  const row = page.locator('table.diff tr.changed', { hasText: 'DOORS' });
  check(await row.count() === 1, 'the renamed VLAN is one changed row');
  check(await row.locator('mark.del').allTextContents().then((m) => m.join('') === 'CAMERAS'), 'the old name is marked on the left');
  check(await row.locator('mark.ins').allTextContents().then((m) => m.join('') === 'DOORS'), 'the new name is marked on the right');
  records = await page.locator('.records-diff').textContent();
  check(records.includes('Added (1)') && records.includes('Removed (1)'), `records without a Key value: one removed, one added: ${records}`);
  await shot('51-compare-changed-words');

  step('the history of E2E VLANs on demo-eos-1 marks the run whose output changed');
  await page.getByRole('link', { name: /history of E2E VLANs on demo-eos-1/ }).click();
  await page.getByRole('heading', { name: 'E2E VLANs on demo-eos-1' }).waitFor();
  const first = page.locator('tbody tr').first();
  check((await first.textContent()).includes('changed'), `the newest run is marked changed: ${await first.textContent()}`);
  await first.getByRole('link', { name: 'what changed' }).click();
  await page.getByRole('heading', { name: new RegExp(`Log #${last} compared with #${added}`) }).waitFor();
  for (const c of [vlans, add, rename]) await api('DELETE', `/api/plugins/toolkit/commands/${c.id}/`);
}

/** backups: a device's configuration tab backs it up now, a change made through
 * FieldKit shows who made it, the diff shows the line, the raw text shows to an
 * admin, the site-wide list names the devices never backed up and backs up a whole
 * site, and the search of the latest configurations finds a line. */
export async function backups() {
  await asAuditor();
  const dev = (await api('GET', '/api/dcim/devices/?name=demo-eos-1')).results[0];
  const backupNow = async (want) => {
    await page.goto(`${BASE}/ui/devices/${dev.id}`);
    await page.getByRole('tab', { name: 'Configuration' }).click();
    check(page.url().endsWith('?tab=config') && !await page.locator('.runner').isVisible(), 'the Configuration tab shows alone, in the address');
    const card = page.locator('.config-card');
    await card.locator('.backup-set option', { hasText: 'auditor devices' }).waitFor({ state: 'attached' });
    await card.locator('.backup-set').selectOption({ label: `auditor devices (${DEVICE_USER})` });
    await card.getByRole('button', { name: 'Back up now' }).click();
    await card.locator('.msg', { hasText: 'Backup:' }).waitFor();
    const said = await card.locator('.msg').first().textContent();
    check(said.includes(want), `backup now: ${said}`);
    return card;
  };

  step('configuration tab: back up now keeps a version; a FieldKit change is attributed');
  await backupNow('');
  const set = await api('POST', '/api/plugins/toolkit/commands/', {
    name: 'Describe Et3', command: 'interface Ethernet3\n description e2e-backup', command_type: 'config',
    platforms: [dev.platform.id] });
  await execute(set.id, dev.id);
  const card = await backupNow('a new version was kept');
  const newest = card.locator('ul.config-versions li').first();
  check((await newest.textContent()).includes(AUDITOR), `the newest version names who changed it: ${await newest.textContent()}`);
  await shot('52-config-card');

  step('a version diff shows the changed line; an admin may show the secrets');
  await newest.getByRole('link', { name: 'diff' }).click();
  await page.locator('table.diff td.code.ins', { hasText: 'description e2e-backup' }).first().waitFor();
  await shot('53-config-diff');
  await page.getByRole('link', { name: /← version #\d+/ }).click();
  const text = await page.locator('pre.config-text').textContent();
  check(text.includes('<secret hidden>') && !text.includes('$6$'), 'the configuration shows its secrets masked');
  await page.getByRole('button', { name: 'Show secrets' }).click();
  check((await page.locator('pre.raw-config').textContent()).includes('$6$'), 'the raw text shows the secret to a superuser');

  step('last good backup: every device, those never backed up first');
  await page.goto(`${BASE}/ui/backups/`);
  const rows = page.locator('tbody tr');
  await rows.first().waitFor();
  check((await rows.first().textContent()).includes('never backed up'), 'a device never backed up comes first');
  check((await page.locator('tbody tr', { hasText: 'demo-eos-1' }).textContent()).includes('view'), 'the backed-up device links its version');
  await shot('54-last-good-backup');

  step('last good backup: a site\'s devices backed up at once');
  await page.locator('.site-pick').selectOption({ label: 'Demo Lab' });
  const all = page.locator('.site-backup');
  await all.locator('.backup-set option', { hasText: 'auditor devices' }).waitFor({ state: 'attached' });
  await all.locator('.backup-set').selectOption({ label: `auditor devices (${DEVICE_USER})` });
  const n = await page.locator('tbody tr').count();
  await all.getByRole('button', { name: `Back up all ${n} devices of Demo Lab` }).click();
  const said = await all.locator('.msg', { hasText: `Backup of ${n} devices` }).textContent();
  check(/0 quarantined, 0 not run/.test(said), `the site's backup: ${said}`);
  await page.waitForFunction(() => !document.querySelector('tbody')?.textContent.includes('never backed up'));
  check(await page.locator('tbody tr', { hasText: 'view' }).count() === n, 'every device of the site has a good backup now');
  await shot('56-site-backup');
  await page.locator('tbody tr', { hasText: 'demo-eos-1' }).getByRole('link', { name: 'demo-eos-1' }).click();
  await page.locator('.config-card').waitFor();
  check(await page.getByRole('tab', { name: 'Configuration' }).getAttribute('aria-selected') === 'true', 'a device of the list opens on its Configuration tab');

  step('search the latest configurations');
  await page.goto(`${BASE}/ui/config-versions/`);
  await page.fill('.config-search input[name=q]', 'description e2e-backup');
  await page.getByRole('button', { name: 'Search latest configurations' }).click();
  await page.locator('tbody tr', { hasText: 'demo-eos-1' }).waitFor();
  check(await page.locator('tbody tr').count() === 1, 'only the device whose latest configuration holds it');
  check((await page.locator('tbody tr pre').textContent()).includes('description e2e-backup'), 'with the line that holds it');
  await shot('55-config-search');
  await api('DELETE', `/api/plugins/toolkit/commands/${set.id}/`);
  // The scenarios after these expect the admin, whom the rate limit holds.
  await login('admin', ADMIN_PASSWORD);
}
