// The page's one way to the server: the same /v1 API every client uses, signed in with the session cookie
// (HttpOnly: this script never sees a token after signing in) and the CSRF token on every change.

let csrf = null;

/** An answer of the API that is not a success: `status`, `type` and the server's message. */
export class ApiError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

/** Remember the session's CSRF token (from sign-in or GET /v1/session). */
export function setCsrf(value) {
  csrf = value;
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

/** One request: `api("GET", "/agents")`, `api("POST", "/agents/x/memories", {content})`. Resolves to the JSON
 * answer (null for 204); rejects with an ApiError. `raw: true` resolves to the Response itself. */
export async function api(method, path, body, {raw = false, headers = {}} = {}) {
  // Cortex-Surface: what the page does is recorded in provenance as done through the browser ("web")
  const init = {method, credentials: "same-origin", headers: {"cortex-surface": "web", ...headers}};
  if (method !== "GET" && method !== "HEAD" && csrf) init.headers["x-csrf-token"] = csrf;
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
