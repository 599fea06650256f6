// hub.mjs: the demo server is also a hub (FIELDKIT_HUB_SERVE): a NOC admin adds a site
// and copies its token, sees it come online when its FieldKit pushes, sees the site of
// the command, platform and log it pushed, revokes it, and gives it a new token.

import { BASE, page, step, check, shot, nav } from './lib.mjs';

/** push is a site's FieldKit pushing a batch with token: its records, or none (a heartbeat). */
async function push(token, instance, records = []) {
  const r = await fetch(`${BASE}/api/hub/v1/push/`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ protocol: 1, instance, epoch: 'e2e-epoch', epoch_start: 1, sent_at: new Date().toISOString(), version: 'e2e', records }) });
  return r.status;
}

/** hub runs the hub's scenarios as admin (logged in by the scenarios before). */
export async function hub() {
  await page.setViewportSize({ width: 1280, height: 860 });
  step('a hub site: its token is shown once');
  await nav('Hub sites');
  await page.getByRole('link', { name: 'New site' }).click();
  const form = page.locator('form.form');
  check(await form.locator('[name=token]').count() === 0, 'the form asks for no token');
  await form.locator('[name=name]').fill('Lyon 3');
  await form.getByRole('button', { name: 'Create site' }).click();
  const secret = page.locator('#new-secret');
  await secret.waitFor();
  const token = (await secret.textContent()).trim();
  check(/^fkh_[A-Za-z0-9_-]{43}$/.test(token), `token ${token}`);
  await shot('40-hub-site-token');

  step('the site comes online when its FieldKit pushes; the list says how far behind it is');
  check(await push(token, 'e2e-instance') === 200, 'a push with the token');
  await nav('Hub sites');
  const row = page.locator('tr', { hasText: 'Lyon 3' });
  await row.waitFor();
  check((await row.textContent()).includes('online') && (await row.textContent()).includes('up to date'), `row: ${await row.textContent()}`);
  await shot('41-hub-sites');

  step('the site\'s command and platform say where they come from; the hub\'s own say "this hub"');
  const platform = { id: 3, name: 'E2E OS', slug: 'e2e-os' };
  check(await push(token, 'e2e-instance', [{ seq: 1, kind: 'platform', op: 'upsert', id: 3, body: platform },
    { seq: 2, kind: 'command', op: 'upsert', id: 8, body: { id: 8, name: 'Show e2e', command: 'show e2e', command_type: 'show', platforms: [platform] } }]) === 200,
  'a push of a platform and a command');
  await nav('Commands');
  const cmd = page.locator('tr', { hasText: 'Show e2e' });
  await cmd.waitFor();
  check((await cmd.locator('td[data-label=Site]').textContent()) === 'Lyon 3', `the site's command: ${await cmd.textContent()}`);
  const own = page.locator('tbody tr', { hasNotText: 'Show e2e' }).first();
  check((await own.locator('td[data-label=Site]').textContent()) === 'this hub', `the hub's own command: ${await own.textContent()}`);
  await nav('Platforms');
  const plat = page.locator('tr', { hasText: 'E2E OS' });
  await plat.waitFor();
  check((await plat.locator('td[data-label=Sites]').textContent()) === 'Lyon 3', `the site's platform: ${await plat.textContent()}`);
  await shot('42-hub-platforms');

  step('a log the site ran says where it ran, in the list and on its page');
  check(await push(token, 'e2e-instance', [{ seq: 3, kind: 'device', op: 'upsert', id: 5, body: { id: 5, name: 'lyon-e2e-sw', platform } },
    { seq: 4, kind: 'log', op: 'upsert', id: 1, uid: 'e2e-log-1', body: { id: 1, device: { id: 5, name: 'lyon-e2e-sw' }, command: { id: 8, name: 'Show e2e' },
      command_type: 'show', username: 'noc', success: true, output: 'e2e output', created: new Date().toISOString() } }]) === 200,
  'a push of a device and a log');
  await nav('Logs');
  const log = page.locator('tr', { hasText: 'lyon-e2e-sw' });
  await log.waitFor();
  check((await log.locator('td[data-label=Device] .log-site').textContent()) === 'Lyon 3', `the site's log: ${await log.textContent()}`);
  await log.locator('td[data-label^=When] a').click();
  const siteDD = page.locator('dt', { hasText: /^Site$/ }).locator('xpath=following-sibling::dd[1]');
  await siteDD.waitFor();
  check((await siteDD.textContent()) === 'Lyon 3', `the log's page: site ${await siteDD.textContent()}`);
  await shot('43-hub-log');
  await nav('Hub sites');
  await row.waitFor();

  step('revoked, the token is refused; a new token works');
  await row.getByRole('link', { name: 'Lyon 3' }).click();
  await page.getByRole('button', { name: 'Revoke' }).click();
  await page.locator('dialog').getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('button', { name: 'Revoke' }).waitFor({ state: 'detached' }); // gone once revoked
  check(await push(token, 'e2e-instance') === 401, 'the revoked token is refused');
  await page.getByRole('button', { name: 'New token' }).click();
  await page.locator('dialog').getByRole('button', { name: 'New token' }).click();
  await secret.waitFor();
  const fresh = (await secret.textContent()).trim();
  check(fresh !== token && await push(fresh, 'e2e-other-instance') === 200, 'the new token works (from a database installed anew)');
}
