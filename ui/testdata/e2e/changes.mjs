// changes.mjs: what changed. A VLAN added between two runs of "VLANs" shows on the
// log's "Compare with previous" page side by side, its words marked, and in the parsed
// records; the command's history on the device marks the run whose output changed.

import { BASE, ADMIN_PASSWORD, env, page, step, check, shot, login, api } from './lib.mjs';

export async function changes() {
  await login('admin', ADMIN_PASSWORD);
  const token = env('FK_CREDENTIAL_TOKEN');
  const dev = (await api('GET', '/api/dcim/devices/?name=demo-ios-1')).results[0];
  const vlans = (await api('GET', '/api/plugins/toolkit/commands/?name=VLANs')).results[0];
  const add = await api('POST', '/api/plugins/toolkit/commands/', {
    name: 'Add VLAN 77', command: 'vlan 77\n name CAMERAS', command_type: 'config', platforms: vlans.platforms.map((p) => p.id) });
  const run = async (cmd) => {
    const r = await api('POST', `/api/plugins/toolkit/commands/${cmd}/execute/`, { device_id: dev.id, credential_token: token });
    check(r.success, `execute ${cmd}: ${JSON.stringify(r)}`);
    return r.command_log_id;
  };

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
    name: 'Rename VLAN 77', command: 'vlan 77\n name DOORS', command_type: 'config', platforms: vlans.platforms.map((p) => p.id) });
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

  step('the history of VLANs on demo-ios-1 marks the run whose output changed');
  await page.getByRole('link', { name: /history of VLANs on demo-ios-1/ }).click();
  await page.getByRole('heading', { name: 'VLANs on demo-ios-1' }).waitFor();
  const first = page.locator('tbody tr').first();
  check((await first.textContent()).includes('changed'), `the newest run is marked changed: ${await first.textContent()}`);
  await first.getByRole('link', { name: 'what changed' }).click();
  await page.getByRole('heading', { name: new RegExp(`Log #${last} compared with #${added}`) }).waitFor();
  for (const c of [add, rename]) await api('DELETE', `/api/plugins/toolkit/commands/${c.id}/`);
}
