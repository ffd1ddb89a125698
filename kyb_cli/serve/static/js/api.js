// The console's one way to the server: fetch + the token + the caller labels; errors shown as sent.

const SESSION_KEY = "kyb.console.session";
const TOKEN_KEY = "kyb.console.token";

function sessionLabel() {
  let id = sessionStorage.getItem(SESSION_KEY);
  if (!id) {
    id = "console-" + Math.random().toString(36).slice(2, 10);
    sessionStorage.setItem(SESSION_KEY, id);
  }
  return id;
}

// A token handed over in the URL fragment (kyb serve --open) never reaches a server log.
export function takeTokenFromUrl() {
  const match = location.hash.match(/token=([^&]+)/);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
}

export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

let onError = () => {};
export function reportErrorsTo(fn) { onError = fn; }

export async function call(method, path, body) {
  const headers = { "X-Kyb-Agent": "human", "X-Kyb-Session": sessionLabel() };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers["Authorization"] = "Bearer " + token;
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (exc) {
    const err = new ApiError(0, `cannot reach the server: ${exc.message}`);
    onError(err, method, path);
    throw err;
  }
  const text = await response.text();
  let data = text;
  if ((response.headers.get("content-type") || "").startsWith("application/json")) {
    try { data = JSON.parse(text); } catch { /* shown as text */ }
  }
  if (!response.ok) {
    const message = data && typeof data === "object" && "error" in data ? data.error : String(text);
    const err = new ApiError(response.status, message, data);
    onError(err, method, path);
    throw err;
  }
  return data;
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body ?? {});

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "" || v === false) continue;
    q.set(k, Array.isArray(v) ? v.join(",") : String(v));
  }
  const s = q.toString();
  return s ? "?" + s : "";
}

export const enc = encodeURIComponent;
