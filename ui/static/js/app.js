// app.js: start-up, the login page, the session bar and navigation, and the one place
// that renders the current route (catching what a page throws, so nothing is swallowed).

import { h, clear, errorBox, spinner, pageHead, link } from './dom.js';
import { api, get, setCsrf, setUnauthorizedHandler, ApiError } from './api.js';
import { start, onRender, match, navigate, route } from './router.js';
import { session, setSession } from './session.js';
import { registerResources } from './resources.js';
import { registerCommands } from './commands.js';
import { registerDevice } from './device.js';
import { registerCredentials } from './credentials.js';
import { registerServices } from './services.js';
import { registerBackups } from './backups.js';
import { registerLogs } from './logs.js';
import { registerDiff } from './diff.js';
import { registerConfigs } from './configs.js';
import { registerParse } from './parse.js';
import { navItems, homePath, notAllowed, registerHome, hubLine } from './home.js';
import { searchBox, registerSearch } from './search.js';
import { registerImport } from './import.js';
import { registerBulkRun } from './bulkrun.js';

const root = document.getElementById('app');

function shell() {
  const nav = h('nav', { class: 'nav', id: 'nav', 'aria-label': 'Main' },
    navItems().map(([title, items]) => h('div', { class: 'nav-group' }, h('div', { class: 'nav-title' }, title),
      h('ul', {}, items.map(([label, href]) => h('li', {}, h('a', { href, 'data-nav': href }, label)))))),
    hubLine());
  const menu = h('button', { type: 'button', class: 'btn small menu-btn', 'aria-label': 'Menu', 'aria-controls': 'nav', 'aria-expanded': 'false', onclick: () => {
    const open = document.body.classList.toggle('nav-open');
    menu.setAttribute('aria-expanded', String(open));
  } }, h('span', { 'aria-hidden': 'true' }, '☰'), h('span', { class: 'menu-word' }, ' Menu'));
  const bar = h('header', { class: 'topbar' },
    menu,
    h('a', { href: homePath(), class: 'brand' }, h('span', { class: 'logo', 'aria-hidden': 'true' }, '▚'), ' FieldKit'),
    searchBox(),
    h('a', { href: '/ui/search', class: 'btn small search-link', 'aria-label': 'Search' }, 'Search'),
    h('div', { class: 'session' },
      h('span', { class: 'user', title: 'Logged in' }, session.user.username, session.user.is_superuser ? h('span', { class: 'badge info' }, 'superuser') : null),
      h('button', { type: 'button', class: 'btn small', id: 'logout', onclick: logout }, 'Log out')));
  const main = h('main', { id: 'main', tabindex: '-1' });
  clear(root, h('a', { href: '#main', class: 'skip' }, 'Skip to content'), bar, h('div', { class: 'layout' }, nav, main));
  return main;
}

async function logout() {
  try {
    await api('POST', '/ui/logout', {});
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) { alert(`Logout failed: ${err.message}`); return; }
  }
  setSession(null);
  setCsrf('');
  navigate('/ui/login', { replace: true });
}

function loginPage() {
  document.title = 'Log in · FieldKit';
  const err = h('div', { class: 'form-top', 'aria-live': 'assertive' });
  const btn = h('button', { type: 'submit', class: 'btn primary wide' }, 'Log in');
  const form = h('form', { class: 'login card', novalidate: true },
    h('h1', {}, h('span', { class: 'logo', 'aria-hidden': 'true' }, '▚'), ' FieldKit'),
    h('p', { class: 'muted' }, 'Log in to run commands on your devices.'),
    err,
    h('div', { class: 'field' }, h('label', { for: 'login-user' }, 'Username'),
      h('input', { id: 'login-user', name: 'username', autocomplete: 'username', required: true, autocapitalize: 'none', spellcheck: 'false' })),
    h('div', { class: 'field' }, h('label', { for: 'login-pass' }, 'Password'),
      h('input', { id: 'login-pass', name: 'password', type: 'password', autocomplete: 'current-password', required: true })),
    btn);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(err);
    const username = form.elements.username.value.trim();
    const password = form.elements.password.value;
    if (!username || !password) { err.append(errorBox(new Error('Enter your username and password.'), 'Missing')); return; }
    btn.disabled = true;
    clear(btn, spinner(), ' Logging in…');
    try {
      const r = await api('POST', '/ui/login', { username, password }, { auth: false });
      setCsrf(r.csrf_token);
      const s = await get('/ui/session', { auth: false });
      setSession(s);
      setCsrf(s.csrf_token);
      const next = new URLSearchParams(location.search).get('next');
      navigate(next && next.startsWith('/ui/') && !next.startsWith('/ui/login') ? next : homePath(), { replace: true });
    } catch (ex) {
      err.append(errorBox(ex, ex.status === 429 ? 'Too many attempts' : ex.status === 401 ? 'Login failed' : 'Error'));
      form.elements.password.select();
    } finally {
      btn.disabled = false;
      btn.textContent = 'Log in';
    }
  });
  clear(root, h('div', { class: 'login-wrap' }, form));
  form.elements.username.focus();
  firstRunHint(err);
}

/** firstRunHint tells the login page of an empty install how to make the first user. */
async function firstRunHint(box) {
  let r;
  try { r = await get('/ui/first-run', { auth: false }); } catch { return; }
  if (!r.needs_first_user) return;
  box.append(h('div', { class: 'msg info first-run', role: 'status' },
    h('strong', {}, 'No user exists yet.'),
    h('p', {}, 'On the machine FieldKit runs on, create the first administrator:'),
    h('pre', { class: 'cmd' }, 'fieldkit user create admin --superuser'),
    h('p', {}, 'It prints the new password. Give it the same --config (or --data) as the server when the server runs with one. Then log in here as admin.')));
}

function notFound(main) {
  clear(main, pageHead('Not found'), h('p', {}, 'There is no page here. ', link(homePath(), 'Go to the start page')));
}

let renderSeq = 0;

async function render() {
  const seq = ++renderSeq;
  const path = location.pathname;
  if (path === '/ui/login') { loginPage(); return; }
  if (!session.user) {
    try {
      const s = await get('/ui/session', { auth: false });
      setSession(s);
      setCsrf(s.csrf_token);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) { toLogin(); return; }
      clear(root, h('div', { class: 'login-wrap' }, errorBox(err, 'FieldKit is not reachable')));
      return;
    }
  }
  if (seq !== renderSeq) return;
  if (path === '/ui' || path === '/ui/') { navigate(homePath() + location.search, { replace: true }); return; }
  let main = document.getElementById('main');
  if (!main) main = shell();
  document.body.classList.remove('nav-open');
  main.setAttribute('aria-busy', 'true');
  for (const a of document.querySelectorAll('[data-nav]')) {
    const on = path === a.dataset.nav.replace(/\/$/, '') || path.startsWith(a.dataset.nav);
    if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const m = match(path);
  try {
    if (m) await m.view(main, m.params); else notFound(main);
  } catch (err) {
    if (seq !== renderSeq || (err instanceof ApiError && err.status === 401)) return;
    if (err instanceof ApiError && err.status === 403) notAllowed(main, err);
    else clear(main, pageHead(err.status === 404 ? 'Not found' : 'Something went wrong'), errorBox(err));
  } finally {
    main.removeAttribute('aria-busy');
  }
}

function toLogin() {
  setSession(null);
  const here = location.pathname + location.search;
  history.replaceState(null, '', `/ui/login${here.startsWith('/ui/') && here !== '/ui/' && !here.startsWith('/ui/login') ? `?next=${encodeURIComponent(here)}` : ''}`);
  loginPage();
}

setUnauthorizedHandler(() => { if (session.user) toLogin(); });
registerResources();
registerCommands();
registerDevice();
registerCredentials();
registerDiff(); // before the logs: /ui/logs/history is not a log id
registerServices();
registerBackups();
registerConfigs();
registerLogs();
registerParse();
registerHome();
registerSearch();
registerImport();
registerBulkRun();
route('/ui/login', () => {});
onRender(render);
start();
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', render);
else render();
