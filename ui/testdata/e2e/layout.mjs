// layout.mjs: every page at every width fits the window; screenshots of each for a
// person to look at.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BASE, EMPTY_BASE, ADMIN_PASSWORD, SHOTS, DEVICE_USER, page, step, check, api, login } from './lib.mjs';

const WIDTHS = [1366, 1024, 820, 360];

/** settled waits until the page's view has rendered and nothing is loading. */
async function settled() {
  await page.waitForFunction(() => {
    const m = document.getElementById('main');
    const login = document.querySelector('.login-wrap');
    return (login || (m && !m.hasAttribute('aria-busy'))) && !document.querySelector('.loading');
  });
}

/**
 * visit opens an in-app URL as a click on a link would (history.pushState and the
 * router, no reload), then waits until it has rendered.
 */
async function visit(url) {
  await page.evaluate((u) => {
    history.pushState(null, '', u);
    window.dispatchEvent(new PopStateEvent('popstate'));
  }, url);
  await page.waitForFunction((u) => location.pathname + location.search === u, url);
  await settled();
}

/** measure fails when the page is wider than the viewport: nobody should scroll sideways. */
async function measure(name, width) {
  const m = await page.evaluate(() => ({ sw: document.documentElement.scrollWidth, iw: window.innerWidth }));
  await page.screenshot({ path: join(SHOTS, 'layout', `${String(width)}-${name}.png`), fullPage: true });
  return m.sw <= m.iw ? null : `${name} at ${width}: page ${m.sw} px wide in a ${m.iw} px window`;
}

/** layoutSweep opens every page at every width and measures the page width. */
export async function layoutSweep() {
  mkdirSync(join(SHOTS, 'layout'), { recursive: true });
  step('layout: every page at every width fits the window');
  await page.locator('#logout').click();
  await page.waitForURL(/\/ui\/login/);
  await login('admin', ADMIN_PASSWORD);
  const first = async (path) => (await api('GET', `${path}?limit=1`)).results[0].id;
  const ids = {};
  for (const [k, p] of Object.entries({ sites: '/api/dcim/sites/', platforms: '/api/dcim/platforms/', interfaces: '/api/dcim/interfaces/',
    vlans: '/api/ipam/vlans/', 'ip-addresses': '/api/ipam/ip-addresses/', tags: '/api/extras/tags/', users: '/api/users/users/',
    groups: '/api/users/groups/', tokens: '/api/users/tokens/', permissions: '/api/users/permissions/', commands: '/api/plugins/toolkit/commands/',
    logs: '/api/plugins/toolkit/command-logs/', schedules: '/api/plugins/toolkit/schedules/', webhooks: '/api/extras/webhooks/',
    'event-rules': '/api/extras/event-rules/' })) {
    try { ids[k] = await first(p); } catch { /* an empty list has no detail page */ }
  }
  const pages = [['devices', '/ui/devices/'], ['device', '/ui/devices/1'], ['device-config', '/ui/devices/1?tab=config'], ['backups-site', '/ui/backups/?site_id=1'], ['device-edit', '/ui/devices/1/edit'], ['device-new', '/ui/devices/new'],
    ['commands', '/ui/commands/'], ['command', `/ui/commands/${ids.commands}`], ['command-edit', `/ui/commands/${ids.commands}/edit`], ['command-new', '/ui/commands/new'],
    ['credentials', '/ui/credentials/'], ['credential-new', '/ui/credentials/new'],
    ['service-credentials', '/ui/service-credentials/'], ['service-credential-new', '/ui/service-credentials/new'],
    ['webhook-deliveries', '/ui/webhook-deliveries/'], ['backup-health', '/ui/backup-health/'],
    ['run-on-several', '/ui/run/'], ['logs', '/ui/logs/'], ['log', `/ui/logs/${ids.logs}`], ['statistics', '/ui/statistics'], ['parse', '/ui/parse/'], ['import', '/ui/import/'], ['welcome', '/ui/welcome'], ['search', '/ui/search?q=demo'], ['not-found', '/ui/no-such-page']];
  for (const k of ['sites', 'platforms', 'interfaces', 'vlans', 'ip-addresses', 'tags', 'users', 'groups', 'tokens', 'permissions', 'schedules', 'webhooks', 'event-rules']) {
    pages.push([k, `/ui/${k}/`], [`${k}-new`, `/ui/${k}/new`]);
    if (ids[k]) pages.push([`${k}-one`, `/ui/${k}/${ids[k]}`], [`${k}-edit`, `/ui/${k}/${ids[k]}/edit`]);
  }
  const problems = [];
  for (const w of WIDTHS) {
    await page.setViewportSize({ width: w, height: 900 });
    // The login page of an install with no user, with its first-run hint (another
    // origin: the pages below start again from this server's).
    await page.goto(`${EMPTY_BASE}/ui/login`);
    await page.locator('.first-run').waitFor();
    const p = await measure('login-empty-install', w);
    if (p) problems.push(p);
    await page.goto(`${BASE}/ui/devices/`);
    await settled();
    for (const [name, url] of pages) {
      await visit(url);
      const p = await measure(name, w);
      if (p) problems.push(p);
    }
  }
  for (const [cmd, name] of [['Show version', 'device-parse-record'], ['Interface status', 'device-wide-parse']]) {
    step(`layout: the device page after "${cmd}" fits every width`);
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto(`${BASE}/ui/devices/1`);
    await page.selectOption('#run-command', { label: cmd });
    await page.selectOption('#run-set', { label: `Demo devices (${DEVICE_USER})` });
    await page.locator('.run-btn').click();
    await page.locator('.parsed table').waitFor();
    if (name === 'device-parse-record') {
      await page.setViewportSize({ width: 1366, height: 768 });
      await page.locator('.result').scrollIntoViewIfNeeded();
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(SHOTS, 'readme-device-1366.png') });
    }
    for (const w of WIDTHS) {
      await page.setViewportSize({ width: w, height: 900 });
      await page.waitForTimeout(100);
      const p = await measure(name, w);
      if (p) problems.push(p);
    }
    if (name === 'device-wide-parse') {
      check(await page.locator('.parsed .scroll-box.overflowing .scroll-hint').isVisible(), 'a table wider than its box says it scrolls');
      const box = page.locator('.parsed .scroll-box');
      check(await box.evaluate((b) => b.classList.contains('more-right') && !b.classList.contains('more-left')), 'the right edge fades: more to see');
      await box.locator('.table-wrap').evaluate((w) => { w.scrollLeft = w.scrollWidth; });
      await page.waitForFunction(() => document.querySelector('.parsed .scroll-box').classList.contains('more-left'));
      check(!(await box.evaluate((b) => b.classList.contains('more-right'))), 'scrolled to the end: no more on the right');
    }
  }

  step('raw output: wrapping is a toggle the browser remembers');
  const pre = page.locator('pre.output');
  const wraps = () => pre.evaluate((p) => getComputedStyle(p).whiteSpace === 'pre-wrap');
  check(!(await wraps()), 'raw output scrolls by default');
  await page.getByRole('button', { name: 'Wrap lines' }).click();
  check(await wraps(), 'raw output wraps after the toggle');
  check(await pre.evaluate((p) => p.scrollWidth <= p.clientWidth), 'wrapped output has nothing to scroll sideways');
  await page.goto(`${BASE}/ui/logs/${ids.logs}`);
  await pre.waitFor();
  check(await wraps(), 'the choice holds on another page after a reload');
  check(await page.getByRole('button', { name: 'Wrap lines' }).getAttribute('aria-pressed') === 'true', 'the toggle shows it is on');
  await page.getByRole('button', { name: 'Wrap lines' }).click();
  check(!(await wraps()), 'and it turns off again');
  await page.setViewportSize({ width: 1366, height: 900 });
  check(problems.length === 0, `pages wider than the window:\n  ${problems.join('\n  ')}`);
}

