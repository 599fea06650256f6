// runs.mjs: a run as a person at a rack meets it on a tablet: show tech-support streams
// while it runs and stops on Cancel; a failed login explains itself; the facts panel
// follows; no page is wider than the tablet.

import { BASE, ADMIN_PASSWORD, DEVICE_USER, page, step, check, shot, login, inPage, csrf } from './lib.mjs';

async function openDevice(name) {
  await page.goto(`${BASE}/ui/devices/`);
  await page.locator('table').getByRole('link', { name }).click();
  await page.getByRole('heading', { name: 'Run a command' }).waitFor();
}

async function fitsWidth(what) {
  const m = await page.evaluate(() => ({ sw: document.documentElement.scrollWidth, iw: window.innerWidth }));
  check(m.sw <= m.iw, `${what}: the page is ${m.sw} px wide in a ${m.iw} px window`);
}

export async function liveRuns() {
  await page.setViewportSize({ width: 820, height: 1180 });
  await login('admin', ADMIN_PASSWORD);

  step('tablet: show tech-support streams while it runs');
  await openDevice('demo-ios-1');
  await page.selectOption('#run-command', { label: 'Tech support' });
  await page.selectOption('#run-set', { label: `Demo devices (${DEVICE_USER})` });
  await page.locator('.run-btn').click();
  const live = page.locator('pre.output.live');
  await live.waitFor();
  await page.waitForFunction(() => (document.querySelector('pre.output.live')?.textContent.match(/\n/g) || []).length >= 80);
  const state = await page.locator('.run-state').textContent();
  check(/running on demo-ios-1… \d+ s · \d+ lines so far/.test(state), `the running state counts lines: ${state}`);
  check(await page.locator('.result .result-head').count() === 0, 'no result yet: the output is arriving');
  const pos = await live.evaluate((p) => p.scrollTop + p.clientHeight >= p.scrollHeight - 30);
  check(pos, 'the live output follows the end');
  await fitsWidth('the device page while a long run streams at 820 px');
  await shot('40-tablet-live-run', false);

  step('tablet: Cancel stops it; the result and the log say who cancelled, with the output so far');
  const cancel = page.getByRole('button', { name: 'Cancel' });
  await cancel.click();
  const head = page.locator('.result .result-head');
  await head.waitFor();
  const msg = await page.locator('.result .msg.failure .failure-text').textContent();
  check(msg.startsWith('Cancelled by admin'), `cancelled: ${msg}`);
  const out = await page.locator('.result pre.output').textContent();
  const lines = out.split('\n').length;
  check(out.includes('show version') && lines >= 80 && lines < 1000, `the output so far is kept, and only that: ${lines} lines of about 1,200`);
  check(/cancelled after \d+\.\d s/.test(await page.locator('.run-state').textContent()), 'the run says it was cancelled, and after how long');
  // A cancelled run is shown as cancelled wherever its outcome shows, never as a red failure.
  check(await head.locator('.badge.cancelled').textContent() === 'cancelled' && await head.locator('.badge.bad').count() === 0, 'the live view\'s badge says cancelled');
  check(await page.locator('.result .msg.failure.error').count() === 0, 'the cancellation is not shown as an error');
  await page.locator('.card', { hasText: 'Recent history' }).locator('li').first().locator('.badge.cancelled').waitFor();
  check(await cancel.count() === 0, 'no cancel button once it ended');
  await fitsWidth('the device page after a cancelled run at 820 px');
  await shot('41-tablet-cancelled');
  await head.getByRole('link', { name: /log #\d+/ }).click();
  await page.getByRole('heading', { name: /Log #\d+: Tech support on demo-ios-1/ }).waitFor();
  check((await page.locator('.msg.failure').textContent()).includes('Cancelled by admin'), 'the log says who cancelled');
  const logId = /\/ui\/logs\/(\d+)/.exec(page.url())[1];
  check(await page.locator('dl .badge.cancelled').textContent() === 'cancelled', 'the log\'s result is cancelled');
  await page.locator('.msg.failure summary').click();
  check((await page.locator('.msg.failure dl').textContent()).includes('admin'), 'its details name who cancelled');
  await page.goto(`${BASE}/ui/logs/?device_id=1`);
  const row = page.locator('tbody tr', { has: page.locator(`a[href="/ui/logs/${logId}"]`) });
  await row.waitFor();
  check(await row.locator('.badge').first().textContent() === 'cancelled', 'the logs list shows it cancelled');
  // In grey: a plain badge's background, neither a success's green nor a failure's red.
  const bg = await row.locator('.badge').first().evaluate((el) => {
    const probe = (cls) => { const s = document.createElement('span'); s.className = cls; document.body.append(s); const c = getComputedStyle(s).backgroundColor; s.remove(); return c; };
    return { it: getComputedStyle(el).backgroundColor, plain: probe('badge'), ok: probe('badge ok'), bad: probe('badge bad') };
  });
  check(bg.it === bg.plain && bg.it !== bg.ok && bg.it !== bg.bad, `the cancelled badge is grey: ${JSON.stringify(bg)}`);

  step('a failed login says, in plain words, where, as whom, with which set, and what to check');
  const r = await inPage('/ui/api/credential-sets/', {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRFToken': await csrf() },
    body: JSON.stringify({ name: 'typo in password', username: DEVICE_USER, password: 'not-the-demo-password' }),
  });
  check(r.status === 201, `a second set: ${r.status} ${JSON.stringify(r.body)}`);
  await openDevice('demo-junos-1');
  const hostKey = () => page.locator('.facts dd', { hasText: /SHA256:|not seen yet/ }).textContent();
  check((await hostKey()) === 'not seen yet', 'the device was never logged in to');
  await page.selectOption('#run-command', { label: 'Show version' });
  await page.selectOption('#run-set', { label: `typo in password (${DEVICE_USER})` });
  await page.locator('.run-btn').click();
  const failure = page.locator('.result .msg.failure');
  await failure.waitFor();
  const text = await failure.locator('.failure-text').textContent();
  check(/^The device at 127\.0\.0\.1 port \d+ refused the login as fieldkit \(credential set “typo in password”\)\. Check the username, password or key in the credential set\.$/.test(text),
    `failed login: ${text}`);
  check(!/exec:|dial tcp|ssh:/.test(text), 'no internal prefix');
  const runState = await page.locator('.run-state').textContent();
  check(/^not run: the login step failed after \d+\.\d s$/.test(runState), `a run that never started does not say it finished: ${runState}`);
  const failedLog = await page.locator('.result .result-head a', { hasText: /log #\d+/ }).getAttribute('href');
  await failure.locator('summary').click();
  const details = await failure.locator('dl').textContent();
  check(details.includes('login') && details.includes('typo in password') && details.includes(DEVICE_USER), `details: ${details}`);
  await fitsWidth('a failed login at 820 px');
  await shot('42-tablet-failed-login');

  step('the facts panel follows a run: the host key seen at the first login shows without a reload');
  await page.selectOption('#run-set', { label: `Demo devices (${DEVICE_USER})` });
  await page.locator('.run-btn').click();
  await page.locator('.result .result-head', { hasText: 'success' }).waitFor();
  await page.locator('.facts dd', { hasText: 'SHA256:' }).waitFor();

  step('a failed run\'s log says why once, and nothing of parsing ("Not parsed: not parsed" before)');
  await page.goto(BASE + failedLog);
  await page.getByRole('heading', { name: /Log #\d+: Show version on demo-junos-1/ }).waitFor();
  const logText = await page.locator('main').textContent();
  check(!/not parsed:\s*not parsed/i.test(logText), `the reason is not doubled: ${logText.slice(0, 400)}`);
  check(await page.getByRole('heading', { name: 'Parsed data' }).count() === 0, 'a run that failed shows no parsed data');
  check(logText.includes('refused the login'), 'the log says why it failed');
  await page.setViewportSize({ width: 1366, height: 900 });
}
