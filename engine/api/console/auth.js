// Sign-in with authorization code and PKCE (S256), as a public client. The access token is
// kept in sessionStorage: it lives as long as the tab, is never sent as a cookie, and the API
// reads it only from the Authorization header the console sets.

const store = window.sessionStorage;
const KEY = { token: "sb.token", verifier: "sb.pkce", state: "sb.state" };

let configPromise = null;

// config reads /console/config.json: issuer, clientId and the scope to ask for.
export function config() {
  if (!configPromise) {
    configPromise = fetch("/console/config.json").then((r) => {
      if (!r.ok) throw new Error("the console's configuration could not be read");
      return r.json();
    });
  }
  return configPromise;
}

// discovery reads the issuer's OpenID configuration.
async function discovery() {
  const cfg = await config();
  const url = cfg.issuer.replace(/\/$/, "") + "/.well-known/openid-configuration";
  let r;
  try {
    r = await fetch(url);
  } catch (e) {
    throw new Error("the identity provider at " + cfg.issuer + " could not be reached");
  }
  if (!r.ok) throw new Error("the identity provider answered " + r.status + " for its configuration");
  const d = await r.json();
  if (!d.authorization_endpoint || !d.token_endpoint) throw new Error("the identity provider's configuration names no endpoints");
  return d;
}

function base64url(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomString() {
  const b = new Uint8Array(32);
  crypto.getRandomValues(b);
  return base64url(b);
}

async function challenge(verifier) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

export function redirectURI() {
  return window.location.origin + "/console/callback";
}

// signIn sends the browser to the issuer's authorization endpoint.
export async function signIn() {
  const [cfg, d] = await Promise.all([config(), discovery()]);
  const verifier = randomString();
  const state = randomString();
  store.setItem(KEY.verifier, verifier);
  store.setItem(KEY.state, state);
  const q = new URLSearchParams({
    response_type: "code", client_id: cfg.clientId, redirect_uri: redirectURI(), scope: cfg.scope,
    state, code_challenge: await challenge(verifier), code_challenge_method: "S256",
  });
  window.location.assign(d.authorization_endpoint + (d.authorization_endpoint.includes("?") ? "&" : "?") + q);
}

// completeSignIn exchanges the code of /console/callback for a token. It returns an error
// message, or "" when signed in.
export async function completeSignIn(params) {
  const expected = store.getItem(KEY.state);
  const verifier = store.getItem(KEY.verifier);
  store.removeItem(KEY.state);
  store.removeItem(KEY.verifier);
  if (params.get("error")) return "The identity provider refused the sign-in (" + params.get("error") + ").";
  if (!params.get("code") || !expected || params.get("state") !== expected || !verifier) {
    return "The sign-in could not be completed: it did not start in this tab. Sign in again.";
  }
  const [cfg, d] = await Promise.all([config(), discovery()]);
  const body = new URLSearchParams({
    grant_type: "authorization_code", code: params.get("code"), redirect_uri: redirectURI(),
    client_id: cfg.clientId, code_verifier: verifier,
  });
  let r;
  try {
    r = await fetch(d.token_endpoint, { method: "POST", body });
  } catch (e) {
    return "The identity provider's token endpoint could not be reached.";
  }
  const t = await r.json().catch(() => ({}));
  if (!r.ok || !t.access_token) return "The identity provider did not issue a token (" + (t.error || r.status) + ").";
  const claims = decode(t.access_token);
  const exp = claims && claims.exp ? claims.exp * 1000 : Date.now() + (t.expires_in || 300) * 1000;
  store.setItem(KEY.token, JSON.stringify({ token: t.access_token, exp }));
  return "";
}

// decode reads a JWT's claims without verifying them (the API verifies).
function decode(jwt) {
  try {
    const part = jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(part));
  } catch (e) {
    return null;
  }
}

// session returns {token, exp, client} while a token is held and not expired, else null.
export function session() {
  const raw = store.getItem(KEY.token);
  if (!raw) return null;
  let s;
  try {
    s = JSON.parse(raw);
  } catch (e) {
    store.removeItem(KEY.token);
    return null;
  }
  if (!s.token || !s.exp || Date.now() >= s.exp) return null;
  const claims = decode(s.token) || {};
  return { token: s.token, exp: s.exp, client: claims.client_id || claims.sub || "" };
}

export function signOut() {
  store.removeItem(KEY.token);
}
