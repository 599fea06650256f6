// hub.mjs: the demo server is also a hub (FIELDKIT_HUB_SERVE): a NOC admin adds a site
// and copies its token, sees it come online when its FieldKit pushes, revokes it, and
// gives it a new token.

import { BASE, page, step, check, shot, nav } from './lib.mjs';

/** push is a site's FieldKit pushing an empty batch (a heartbeat) with token. */
async function push(token, instance) {
  const r = await fetch(`${BASE}/api/hub/v1/push/`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ protocol: 1, instance, epoch: 'e2e-epoch', epoch_start: 1, sent_at: new Date().toISOString(), version: 'e2e', records: [] }) });
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
