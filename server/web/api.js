// The HTTP API as the pages use it: the token kept in localStorage and sent as a bearer
// header (never in a URL), every answer decoded, every refusal turned into an ApiError that
// says what the server said (its code, its rule, its message).

const KEY = "patrician.session";

export function session() {
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) || "null");
    return stored && typeof stored.token === "string" ? stored : null;
  } catch {
    return null;
  }
}

export function saveSession(value) {
  localStorage.setItem(KEY, JSON.stringify(value));
}

export function forget() {
  localStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, body, retryAfter = null) {
    super((body && body.message) || `the server answered ${status}`);
    this.status = status;
    this.body = body || {};
    // A refusal for now (429, 503): the seconds its Retry-After says to wait, or null.
    const seconds = retryAfter === null || retryAfter === "" ? NaN : Number(retryAfter);
    this.retryAfter = Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
  }
  get code() { return this.body.error || "error"; }
  get rule() { return this.body.rule || null; }
  get index() { return this.body.index; }
}

// `token`: this one instead of the session's (a login link's, checked before it is kept).
export async function call(method, path, body, { anonymous = false, token = null } = {}) {
  const headers = { Accept: "application/json" };
  const mine = anonymous ? null : session();
  if (token) headers.Authorization = `Bearer ${token}`;
  else if (mine) headers.Authorization = `Bearer ${mine.token}`;
  const options = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    options.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const text = await response.text();
  let decoded = null;
  if (text) {
    try { decoded = JSON.parse(text); } catch { decoded = { message: text.slice(0, 200) }; }
  }
  if (!response.ok) throw new ApiError(response.status, decoded, response.headers.get("Retry-After"));
  return decoded;
}

export const get = (path, options) => call("GET", path, undefined, options);
export const post = (path, body, options) => call("POST", path, body, options);

export function newCommandId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// The refusal of a command in words, with its rule: "R14: the card must be taken ...".
export function refusalText(error) {
  if (!(error instanceof ApiError)) return String(error.message || error);
  const rule = error.rule ? `${error.rule}: ` : "";
  return `${rule}${error.message}`;
}
