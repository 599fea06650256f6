// firstrun.mjs: what a newcomer meets before there is anything to do: an install with no
// user, an account with no permissions, lists with nothing in them, the login throttle.

import { BASE, EMPTY_BASE, ADMIN_PASSWORD, page, step, check, api, shot, login } from './lib.mjs';

export async function firstRun() {
  step('an empty install says on its login page how to create the first user');
  await page.goto(`${EMPTY_BASE}/`);
  await page.waitForURL(/\/ui\/login/);
  const hint = page.locator('.first-run');
  await hint.waitFor();
  check((await hint.textContent()).includes('fieldkit user create admin --superuser'), `first-run hint: ${await hint.textContent()}`);
  await shot('20-empty-install-login');
  await page.goto(`${BASE}/ui/login`);
  await page.locator('#login-user').waitFor();
  await page.waitForLoadState('networkidle');
  check(await page.locator('.first-run').count() === 0, 'an install with users shows no first-run hint');

  step('the login throttle says how long to wait, once');
  for (let i = 0; i < 6; i++) {
    await page.fill('#login-user', 'e2e-throttled');
    await page.fill('#login-pass', `wrong-${i}`);
    await page.press('#login-pass', 'Enter');
    await page.locator('.msg.error').waitFor();
  }
  const throttled = await page.locator('.msg.error').textContent();
  check(/Too many attempts/.test(throttled), `throttled: ${throttled}`);
  check((throttled.match(/try again in/gi) || []).length === 1, `the wait is said once: ${throttled}`);

  step('a user without permissions lands on a welcome page that says what to do and whom to ask');
  await api('POST', '/api/users/users/', { username: 'e2e-nobody', password: 'e2e-nobody-password-1' });
  await login('e2e-nobody', 'e2e-nobody-password-1');
  await page.waitForURL(/\/ui\/welcome$/);
  await page.getByRole('heading', { name: 'Welcome, e2e-nobody' }).waitFor();
  const welcome = await page.locator('main').textContent();
  check(!/Something went wrong/.test(welcome), 'no "Something went wrong"');
  check(/no permissions yet/.test(welcome) && /credential sets/.test(welcome), `what they may do: ${welcome}`);
  check(await page.locator('ul.contacts li', { hasText: 'admin' }).count() === 1, 'the administrator is named');
  check(/e2e-nobody/.test(await page.locator('main').getByText('Tell them your username').textContent()), 'the user is told what to say');
  await shot('21-no-permissions-welcome');
  await page.goto(`${BASE}/ui/devices/`);
  await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
  check(await page.locator('ul.contacts li', { hasText: 'admin' }).count() === 1, 'a refused page names whom to ask too');
  await shot('22-no-permissions-refused');

  step('an empty list says what would fill it and links there; a filtered one offers to clear');
  await login('admin', ADMIN_PASSWORD);
  await page.goto(`${BASE}/ui/groups/`);
  const empty = page.locator('.empty-state');
  await empty.waitFor();
  check(/Groups give many users the same permissions/.test(await empty.textContent()), `empty groups: ${await empty.textContent()}`);
  await shot('23-empty-list');
  await empty.getByRole('link', { name: 'Add a group' }).click();
  await page.getByRole('heading', { name: 'New group' }).waitFor();
  await page.goto(`${BASE}/ui/logs/?q=no-such-log-anywhere`);
  await page.locator('.empty-state', { hasText: 'No command logs match these filters.' }).waitFor();
  await page.getByRole('button', { name: 'Clear the filters' }).click();
  await page.waitForURL(/\/ui\/logs\/$/);
  await page.locator('tbody tr').first().waitFor();
}
