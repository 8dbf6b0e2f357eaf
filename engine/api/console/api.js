// The public API, called with the operator's bearer token. Every failure becomes an ApiError
// carrying the problem's status, code and detail.

import { session } from "./auth.js";

export class ApiError extends Error {
  constructor(status, code, detail) {
    super(detail || code || "request failed");
    this.status = status;
    this.code = code;
  }
}

let onAuthFailure = () => {};
export function setAuthFailureHandler(fn) { onAuthFailure = fn; }

export async function call(method, path, body) {
  const s = session();
  if (!s) {
    const err = new ApiError(401, "authentication.refused", "Your session has ended.");
    onAuthFailure(err);
    throw err;
  }
  const init = { method, headers: { Authorization: "Bearer " + s.token } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let r;
  try {
    r = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, "network", "The server could not be reached.");
  }
  const data = await r.json().catch(() => null);
  if (!r.ok) {
    const err = new ApiError(r.status, data && data.code, data && data.detail);
    if (r.status === 401 || (r.status === 403 && err.code === "operation.not-authorized")) onAuthFailure(err);
    throw err;
  }
  return data;
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body === undefined ? {} : body);

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? "?" + s : "";
}
