// finding.mjs: finding things: sorting a list by a column, the header search across
// devices, addresses, commands and logs, and times shown with their zone.

import { BASE, ADMIN_PASSWORD, BROWSER_ZONE, SERVER_ZONE, page, step, check, api, shot, login } from './lib.mjs';

const firstCells = (col) => page.locator(`tbody tr td:nth-child(${col})`).allTextContents();
const sorted = (xs, desc) => xs.every((x, i) => i === 0 || (desc ? xs[i - 1] >= x : xs[i - 1] <= x));

export async function finding() {
  await login('admin', ADMIN_PASSWORD);

  step('a list sorts by a column: click once ascending, twice descending, the server orders');
  await page.goto(`${BASE}/ui/devices/`);
  const nameHead = page.locator('th', { hasText: 'Name' });
  await nameHead.getByRole('button').click();
  await page.waitForURL(/ordering=name/);
  await page.locator('th[aria-sort="ascending"]', { hasText: 'Name' }).waitFor();
  let names = await firstCells(1);
  check(sorted(names, false) && names.length >= 3, `ascending: ${names}`);
  const last = names[names.length - 1];
  await nameHead.getByRole('button').click();
  await page.waitForURL(/ordering=-name/);
  await page.locator('th[aria-sort="descending"]', { hasText: 'Name' }).waitFor();
  names = await firstCells(1);
  check(sorted(names, true) && names[0] === last, `descending: ${names}`);
  check(await page.locator('th', { hasText: 'Primary IP' }).getByRole('button').count() === 0, 'a column the API cannot order by has no sort button');
  await shot('30-devices-sorted');
  await page.goto(`${BASE}/ui/logs/?success=false`);
  await page.locator('th', { hasText: 'Duration' }).getByRole('button').click();
  await page.waitForURL(/ordering=execution_duration/);
  check(/success=false/.test(page.url()), 'sorting keeps the filters');
  await page.locator('th[aria-sort="ascending"]', { hasText: 'Duration' }).waitFor();
  const ms = (await page.locator('tbody tr td[data-label=Duration]').allTextContents()).map((t) => (t.endsWith(' ms') ? parseFloat(t) / 1000 : parseFloat(t)));
  check(sorted(ms, false), `durations ascending: ${ms}`);
  check((await page.locator('tbody tr').allTextContents()).every((t) => t.includes('failed')), 'only failed logs, sorted');

  step('the header search finds devices, addresses, commands and logs; "/" focuses it');
  await page.goto(`${BASE}/ui/commands/`);
  await page.locator('tbody tr').first().waitFor();
  await page.keyboard.press('/');
  check(await page.evaluate(() => document.activeElement && document.activeElement.id === 'site-search'), '"/" focuses the search box');
  await page.keyboard.type('demo-ios');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/ui\/search\?q=demo-ios/);
  const devices = page.locator('section.search-kind', { has: page.getByRole('heading', { name: /^Devices/ }) });
  await devices.getByRole('link', { name: 'demo-ios-1' }).waitFor();
  const logs = page.locator('section.search-kind', { has: page.getByRole('heading', { name: /^Command logs/ }) });
  await logs.locator('tbody tr').first().waitFor();
  check(await logs.getByRole('link', { name: /All \d+ command logs matching/ }).count() === 1, 'many logs: a link to all of them');
  await shot('31-search');
  await logs.getByRole('link', { name: /All \d+ command logs matching/ }).click();
  await page.waitForURL(/\/ui\/logs\/\?q=demo-ios/);
  check(await page.locator('#flt-q').inputValue() === 'demo-ios', 'the full list keeps the search');
  await page.goto(`${BASE}/ui/search?q=127.0.0.1`);
  const ips = page.locator('section.search-kind', { has: page.getByRole('heading', { name: /^IP addresses/ }) });
  await ips.getByRole('link', { name: '127.0.0.1/8' }).first().waitFor();
  await page.goto(`${BASE}/ui/search?q=show%20vlan`);
  const cmds = page.locator('section.search-kind', { has: page.getByRole('heading', { name: /^Commands/ }) });
  await cmds.getByRole('link', { name: 'VLANs' }).waitFor();

  step('times show in the browser\'s zone with its name; UTC and the server\'s zone on hover');
  const log = (await api('GET', '/api/plugins/toolkit/command-logs/?limit=1')).results[0];
  await page.goto(`${BASE}/ui/logs/${log.id}`);
  const logged = page.locator('dd time').nth(1);
  await logged.waitFor();
  const shown = await logged.textContent();
  const want = new Intl.DateTimeFormat('en-CA', { timeZone: BROWSER_ZONE, year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(new Date(log.created)).replace(', ', ' ');
  check(shown.startsWith(want) && /\S+$/.test(shown.slice(want.length).trim()), `"${shown}" is ${log.created} in ${BROWSER_ZONE} (${want}) with the zone's name`);
  const title = await logged.getAttribute('title');
  const utc = log.created.replace('T', ' ').slice(0, 19);
  check(title.includes(`${utc} UTC`), `hover shows UTC: ${title}`);
  check(title.includes(SERVER_ZONE), `hover shows the server's zone: ${title}`);
  check(/From \(\S+\)/.test(await page.goto(`${BASE}/ui/logs/`).then(() => page.locator('label[for="flt-from"]').textContent())), 'the date filters name their zone');
}
