// The page's client for its JSON API: the bearer token, the CSRF header,
// JSON errors and the chat's event stream.

const TOKEN_KEY = 'agcore-token';

/** An API error: the HTTP status and the server's message. */
export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let askToken = null;
let asking = null; // the token prompt in progress, shared by concurrent 401s

/**
 * Sets the function asked for a token when the server answers 401. It gets
 * whether a token was already tried and resolves to the token, or null.
 */
export function onTokenNeeded(fn) {
  askToken = fn;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** Sends one request; on 401 asks for a token and tries again. */
export async function request(method, path, body, signal) {
  for (let attempt = 0; ; attempt++) {
    const headers = { Accept: 'application/json' };
    if (method !== 'GET') headers['X-Agcore-CSRF'] = '1';
    const t = token();
    if (t) headers.Authorization = 'Bearer ' + t;
    const init = { method, headers, signal, credentials: 'same-origin', cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    if (res.status === 401 && askToken && attempt < 3) {
      if (token() !== t) continue; // another request got a new token meanwhile
      if (!asking) {
        asking = Promise.resolve(askToken(t !== null)).finally(() => { asking = null; });
      }
      const next = await asking;
      if (!next) throw new APIError(401, 'this server needs a token');
      setToken(next);
      continue;
    }
    if (!res.ok) {
      let msg = res.statusText || 'HTTP ' + res.status;
      try {
        const j = await res.json();
        if (j && j.error && j.error.message) msg = j.error.message;
      } catch (_) { /* not JSON */ }
      throw new APIError(res.status, msg);
    }
    return res;
  }
}

export async function getJSON(path) {
  return (await request('GET', path)).json();
}

export async function sendJSON(method, path, body) {
  return (await request(method, path, body)).json();
}

/** Yields the JSON events of a text/event-stream response, in order. */
export async function* events(res) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const data = block.split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).replace(/^ /, ''))
          .join('\n');
        if (data) yield JSON.parse(data);
      }
    }
  } finally {
    reader.releaseLock();
  }
}
