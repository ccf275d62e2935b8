// The page's one way to the server: the same /v1 API every client uses, signed in with the session cookie
// (HttpOnly: this script never sees a token after signing in) and the session's key, sent as X-CSRF-Token with
// every request. The key is kept in localStorage, which belongs to this origin alone (scheme, host and port):
// a cookie is sent to every port of the host, so the cookie alone must not be enough.

const KEY = "cortex.session-key";
let csrf = null;
try { csrf = localStorage.getItem(KEY); } catch (_) { /* storage refused: sign in again after a reload */ }

/** An answer of the API that is not a success: `status`, `type` and the server's message. */
export class ApiError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

/** Remember the session's key (from sign-in), or forget it (null: signed out). */
export function setCsrf(value) {
  csrf = value;
  try {
    if (value) localStorage.setItem(KEY, value);
    else localStorage.removeItem(KEY);
  } catch (_) { /* storage refused: the key lasts as long as the page */ }
}

/** The headers every request of the page carries (its surface; the session's key). */
export function sessionHeaders() {
  return csrf ? {"x-csrf-token": csrf} : {};
}

/** Build a query string from an object (arrays repeat the key; empty values are left out). */
export function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value === undefined || value === null || value === "") continue;
    if (Array.isArray(value)) value.forEach((v) => q.append(key, v));
    else q.append(key, String(value));
  }
  const text = q.toString();
  return text ? `?${text}` : "";
}

/** How many changes (non-GET requests) of the page are under way, and how many it has begun in all. */
let writes = 0;
let begun = 0;

/** Whether a change the page asked for is under way (live.js waits for it before re-rendering the screen: the
 * screen's own report of it must be on the screen first). */
export function writing() {
  return writes > 0;
}

/** How many changes the page has begun (app.js: a quiet re-render during which one began is not shown). */
export function changesBegun() {
  return begun;
}

/** One request: `api("GET", "/agents")`, `api("POST", "/agents/x/memories", {content})`. Resolves to the JSON
 * answer (null for 204); rejects with an ApiError. `raw: true` resolves to the Response itself. */
export async function api(method, path, body, options = {}) {
  const change = method !== "GET" && method !== "HEAD";
  if (change) {
    writes++;
    begun++;
  }
  try {
    return await request(method, path, body, options);
  } finally {
    if (change) writes--;
  }
}

async function request(method, path, body, {raw = false, headers = {}} = {}) {
  // Cortex-Surface: what the page does is recorded in provenance as done through the browser ("web")
  const init = {method, credentials: "same-origin", headers: {"cortex-surface": "web", ...sessionHeaders(), ...headers}};
  if (body !== undefined) {
    if (typeof body === "string" || body instanceof Blob) {
      init.body = body;
    } else {
      init.body = JSON.stringify(body);
      init.headers["content-type"] = "application/json";
    }
  }
  const answer = await fetch(`/v1${path}`, init);
  if (!answer.ok) {
    let type = "Error";
    let message = `${answer.status} ${answer.statusText}`;
    try {
      const data = await answer.json();
      if (data && data.error) {
        type = data.error.type || type;
        message = data.error.message || message;
      } else if (data && data.detail) {
        message = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
      }
    } catch (_) { /* not JSON */ }
    throw new ApiError(answer.status, type, message);
  }
  if (raw) return answer;
  if (answer.status === 204) return null;
  const kind = answer.headers.get("content-type") || "";
  return kind.includes("json") ? answer.json() : answer.text();
}
