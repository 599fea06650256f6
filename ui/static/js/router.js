// router.js: history.pushState routing. Routes are patterns like '/ui/commands/:id';
// in-app links are plain <a href="/ui/..."> and are intercepted here, so they still
// open in a new tab with a middle click.

const routes = [];
let renderFn = () => {};

/** route registers a page: view(params, query) renders it. */
export function route(pattern, view) {
  const keys = [];
  const re = new RegExp('^' + pattern.replace(/:(\w+)/g, (_, k) => { keys.push(k); return '([^/]+)'; }) + '/?$');
  routes.push({ re, keys, view });
}

export function match(path) {
  for (const r of routes) {
    const m = r.re.exec(path);
    if (m) {
      const params = {};
      r.keys.forEach((k, i) => { params[k] = decodeURIComponent(m[i + 1]); });
      return { view: r.view, params };
    }
  }
  return null;
}

export function onRender(fn) { renderFn = fn; }

/** navigate goes to an in-app URL; replace keeps the history entry (filters, paging). */
export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  renderFn();
}

/** setQuery replaces the current URL's query (for list filters) and re-renders. */
export function setQuery(params, { replace = false } = {}) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== '' && v != null) u.set(k, v);
  const s = u.toString();
  navigate(location.pathname + (s ? '?' + s : ''), { replace });
}

export function query() {
  return Object.fromEntries(new URLSearchParams(location.search));
}

export function start() {
  window.addEventListener('popstate', () => renderFn());
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = e.target.closest('a[href]');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith('/ui/') || url.pathname.startsWith('/ui/static/')) return;
    e.preventDefault();
    navigate(url.pathname + url.search);
  });
}
