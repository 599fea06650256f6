// api.js: the one fetch wrapper. It sends the session's CSRF token on unsafe methods,
// turns every non-2xx answer into an ApiError carrying the server's body, and sends
// the user to the login page when the session is gone (401).

let csrfToken = '';
let onUnauthorized = () => {};

/** setCsrf remembers the token from /ui/session or /ui/login. */
export function setCsrf(token) { csrfToken = token || ''; }

/** setUnauthorizedHandler is called on any 401 outside the login call itself. */
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

/** ApiError is a failed request: status, the decoded body and Retry-After seconds. */
export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super(describe(status, body));
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
  /** fieldErrors returns {field: "message"} for a 400 with per-field lists. */
  fieldErrors() {
    const out = {};
    if (this.status !== 400 || !this.body || typeof this.body !== 'object') return out;
    for (const [k, v] of Object.entries(this.body)) {
      if (k === 'detail' || k === 'non_field_errors') continue;
      out[k] = flatten(v);
    }
    return out;
  }
}

function flatten(v) {
  if (v == null) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(flatten).join(' ');
  if (typeof v === 'object') return Object.entries(v).map(([k, x]) => `${k}: ${flatten(x)}`).join('; ');
  return String(v);
}

function describe(status, body) {
  if (body && typeof body === 'object') {
    if (body.detail) return String(body.detail);
    if (body.details && body.details.reason) return String(body.details.reason);
    if (body.error) return String(body.error);
    if (body.non_field_errors) return flatten(body.non_field_errors);
    const parts = Object.entries(body).map(([k, v]) => `${k}: ${flatten(v)}`);
    if (parts.length) return parts.join(' · ');
  }
  if (typeof body === 'string' && body.trim()) return body.trim().slice(0, 300);
  if (status === 0) return 'The server could not be reached. Is FieldKit still running?';
  return `Request failed with status ${status}.`;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * api performs one JSON request. body undefined sends none. opts.auth=false skips the
 * 401 redirect (the login form handles its own 401).
 */
export async function api(method, path, body, opts = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (!SAFE.has(method) && csrfToken) headers['X-CSRFToken'] = csrfToken;
  let res;
  try {
    res = await fetch(path, {
      method, headers, credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: opts.signal,
    });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, null, null);
  }
  let data = null;
  const type = res.headers.get('Content-Type') || '';
  if (res.status !== 204) {
    data = type.includes('json') ? await res.json().catch(() => null) : await res.text();
  }
  if (res.status === 401 && opts.auth !== false) onUnauthorized();
  if (!res.ok) {
    const ra = res.headers.get('Retry-After');
    throw new ApiError(res.status, data, ra == null ? null : Number(ra));
  }
  return data;
}

/**
 * stream posts body to a streaming endpoint and reads its server-sent events, calling
 * on[event](data) for each; it resolves with the data of the "result" event. A refusal
 * (any answer that is not a stream) is an ApiError as api() throws it; an "error" event,
 * or a stream that ends without a result, is an Error.
 */
export async function stream(path, body, on = {}) {
  let res;
  try {
    res = await fetch(path, {
      method: 'POST', credentials: 'same-origin', body: JSON.stringify(body),
      headers: { Accept: 'text/event-stream', 'Content-Type': 'application/json', 'X-CSRFToken': csrfToken },
    });
  } catch {
    throw new ApiError(0, null, null);
  }
  if (!(res.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
    const data = await res.json().catch(() => null);
    if (res.status === 401) onUnauthorized();
    const ra = res.headers.get('Retry-After');
    throw new ApiError(res.status, data, ra == null ? null : Number(ra));
  }
  const reader = res.body.getReader();
  const text = new TextDecoder();
  let buf = '';
  for (;;) {
    let chunk;
    try { chunk = await reader.read(); } catch { break; }
    if (chunk.done) break;
    buf += text.decode(chunk.value, { stream: true });
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let event = 'message', data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      const value = data ? JSON.parse(data) : null;
      if (event === 'result') { reader.cancel().catch(() => {}); return value; }
      if (event === 'error') throw new Error(value && value.detail ? value.detail : 'The execution failed on the server.');
      if (on[event]) on[event](value);
    }
  }
  throw new Error('The connection to FieldKit was lost while the command ran. It runs on to its end; its log will show how it ended.');
}

export const get = (path, opts) => api('GET', path, undefined, opts);
export const post = (path, body, opts) => api('POST', path, body === undefined ? {} : body, opts);
export const patch = (path, body) => api('PATCH', path, body);
export const put = (path, body) => api('PUT', path, body);
export const del = (path) => api('DELETE', path);

const described = new Map();

/**
 * metadata is what the server says of a resource (OPTIONS, as Django REST framework
 * answers it, plus the orderings its list accepts). One request per path and page load.
 */
export function metadata(path) {
  if (!described.has(path)) {
    described.set(path, api('OPTIONS', path).catch((err) => { described.delete(path); throw err; }));
  }
  return described.get(path);
}

/**
 * describeFields is a resource's fields: {name: {type, label, required, choices,
 * list_url, …}} in the order forms show them, for a create (a list path) or an update
 * (an object path).
 */
export async function describeFields(path) {
  const a = ((await metadata(path)) || {}).actions || {};
  return a.POST || a.PUT || {};
}

/** orderings are the names a list's ?ordering= accepts. */
export async function orderings(path) {
  return new Set(((await metadata(path)) || {}).ordering || []);
}

/** qs builds a query string from an object, leaving out empty values. */
export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => u.append(k, x));
    else u.append(k, v);
  }
  const s = u.toString();
  return s ? '?' + s : '';
}

/** getAll follows a list's pages (limit 1000) up to max rows; for selects and charts. */
export async function getAll(path, params = {}, max = 5000) {
  let offset = 0;
  const rows = [];
  for (;;) {
    const page = await get(path + qs({ ...params, limit: 1000, offset }));
    rows.push(...page.results);
    offset += page.results.length;
    if (!page.next || !page.results.length || rows.length >= max) {
      return { rows, count: page.count, truncated: rows.length < page.count };
    }
  }
}

export const T = '/api/plugins/toolkit';
