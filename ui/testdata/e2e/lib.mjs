// lib.mjs: the browser and the helpers every scenario shares. The server under test is
// a running `fieldkit serve --demo` started by ui/e2e_test.go, which passes everything in
// FK_* variables.

import { createRequire } from 'node:module';
import { join } from 'node:path';

export const env = (k) => {
  const v = process.env[k];
  if (!v) { console.error(`missing ${k}`); process.exit(2); }
  return v;
};
export const BASE = env('FK_BASE');
export const EMPTY_BASE = env('FK_EMPTY_BASE'); // an install with no user yet
export const ADMIN_PASSWORD = env('FK_ADMIN_PASSWORD');
export const API_TOKEN = env('FK_API_TOKEN');
export const SHOTS = env('FK_SCREENSHOTS');
export const SERVER_ZONE = env('FK_SERVER_ZONE'); // the demo's server.time_zone
// The browser runs in a zone that is neither UTC nor the server's, so that a time shown
// in the wrong zone shows.
export const BROWSER_ZONE = 'Europe/Berlin';
const require = createRequire(join(env('FK_PLAYWRIGHT_DIR'), 'node_modules', '/'));
const { chromium } = require('playwright-core');

// The demo's simulated devices accept this login (see demo.go).
export const DEVICE_USER = 'fieldkit';
export const DEVICE_PASS = 'demo-device-password';
export const DEVICE_ENABLE = 'demo-enable-secret';

export const t0 = Date.now();
export const state = { current: '' };
export function step(name) {
  state.current = name;
  console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${name}`);
}
export function check(cond, msg) {
  if (!cond) throw new Error(`assertion failed: ${msg}`);
}

/** api calls the JSON API with the admin token (setup outside the browser). */
export async function api(method, path, body) {
  const res = await fetch(BASE + path, {
    method, headers: { Authorization: `Token ${API_TOKEN}`, 'Content-Type': 'application/json', Accept: 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = res.status === 204 ? null : await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

// A fresh user-data directory per run: no cookies, cache or service state carried over.
export const ctx = await chromium.launchPersistentContext(env('FK_PROFILE'), {
  executablePath: env('FK_CHROMIUM'),
  headless: true,
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 860 },
  timezoneId: BROWSER_ZONE,
  acceptDownloads: true,
});
export const page = ctx.pages()[0] || await ctx.newPage();
page.setDefaultTimeout(10000);
export const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) console.log(`  console error: ${m.text()}`); });

export async function shot(name, fullPage = true) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
}
/** nav clicks a link of the side navigation (an in-app navigation, no reload). */
export async function nav(label) {
  await page.locator('#nav').getByRole('link', { name: label, exact: true }).click();
}
/** inPage runs fetch inside the page (same origin, session cookie) and returns {status, body}. */
export async function inPage(path, init) {
  return page.evaluate(async ([p, i]) => {
    const r = await fetch(p, i);
    const text = await r.text();
    let body = text;
    try { body = JSON.parse(text); } catch { /* not JSON */ }
    return { status: r.status, body };
  }, [path, init]);
}
export async function csrf() {
  const s = await inPage('/ui/session', {});
  return s.body.csrf_token;
}
export async function login(username, password) {
  await page.goto(`${BASE}/ui/login`);
  await page.fill('#login-user', username);
  await page.fill('#login-pass', password);
  await page.press('#login-pass', 'Enter');
  await page.locator('#logout').waitFor();
  const who = await inPage('/ui/session', {});
  check(who.body.user && who.body.user.username === username, `logged in as ${username}`);
}

/** pick chooses a related object in a form's or filter's picker: type, then click the option. */
export async function pick(scope, name, typed, option) {
  const box = scope.locator(`.picker[data-name=${name}] [role=combobox]`);
  await box.click();
  await box.fill(typed);
  await scope.getByRole('option', { name: option, exact: true }).click();
}
