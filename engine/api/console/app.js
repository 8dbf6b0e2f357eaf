// The console's shell: sign-in state, the hash router, timers per page, and the refusal of a
// token that is not an operator's.

import { completeSignIn, session, signIn, signOut } from "./auth.js";
import { get, setAuthFailureHandler } from "./api.js";
import { h, notice } from "./ui.js";
import * as pages from "./pages.js";

const routes = {
  overview: pages.overview, messages: pages.messages, held: pages.held, failed: pages.failed,
  providers: pages.providers, inbox: pages.inbox, journal: pages.journal,
};

const $ = (id) => document.getElementById(id);
let timers = [];
let refused = null;

function stopTimers() {
  for (const t of timers) clearInterval(t);
  timers = [];
}

function showSignIn(reason) {
  stopTimers();
  $("app").hidden = true;
  $("signin").hidden = false;
  $("signin-reason").textContent = reason || "";
  $("signin-reason").hidden = !reason;
  $("signin-button").focus();
}

function showRefusal(err) {
  stopTimers();
  refused = err;
  const main = $("main");
  main.replaceChildren(h("div", { class: "refusal", role: "alert" },
    h("h1", {}, "This account may not use the operator console"),
    h("p", {}, "You are signed in as ", h("strong", {}, session() ? session().client : "an unknown client"),
      ", whose access profile is not an operator's. The API refused its calls (" + (err.code || err.status) + ")."),
    h("p", {}, "Sign out and sign in with an operator account."),
    h("button", { class: "btn btn-primary", type: "button", onclick: () => { signOut(); showSignIn("You signed out."); } }, "Sign out")));
  main.focus();
}

const ENDED = "Your session has ended. Sign in again to go on.";

// endSession drops the token and remembers why, so that a reload still says so.
function endSession() {
  signOut();
  sessionStorage.setItem("sb.ended", "1");
  showSignIn(ENDED);
}

setAuthFailureHandler((err) => {
  if (err.status === 401) {
    endSession();
  } else {
    showRefusal(err);
  }
});

function parseHash() {
  const raw = window.location.hash.replace(/^#\/?/, "");
  const [path, q] = raw.split("?");
  const parts = path.split("/").filter(Boolean);
  return { page: parts[0] || "overview", id: parts[1] ? decodeURIComponent(parts[1]) : null, params: new URLSearchParams(q || "") };
}

function updateCounts(dispatch) {
  for (const [id, n] of [["nav-held", dispatch.unknown || 0], ["nav-failed", dispatch.failed || 0]]) {
    const el = $(id);
    el.textContent = String(n);
    el.hidden = n === 0;
    el.setAttribute("aria-label", n + " messages");
  }
}

async function refreshCounts() {
  try {
    updateCounts((await get("/v1/slo")).dispatch);
  } catch (e) {
    /* the page shows the failure */
  }
}

async function render() {
  const s = session();
  if (!s) {
    showSignIn(sessionStorage.getItem("sb.token") || sessionStorage.getItem("sb.ended") ? ENDED : "");
    return;
  }
  stopTimers();
  refused = null;
  $("signin").hidden = true;
  $("app").hidden = false;
  $("who").textContent = s.client;
  const { page, id, params } = parseHash();
  for (const a of document.querySelectorAll("[data-nav]")) {
    if (a.dataset.nav === page) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const main = $("main");
  main.replaceChildren(h("p", { class: "muted loading" }, "Loading…"));
  const ctx = {
    every(ms, fn) {
      const t = setInterval(() => { if (!refused) fn(() => clearInterval(t)); }, ms);
      timers.push(t);
    },
    updateCounts,
    refreshCounts,
    rerender: render,
  };
  ctx.every(10000, refreshCounts);
  refreshCounts();
  // Sign out before the token expires: the API would refuse it anyway.
  const left = s.exp - Date.now();
  timers.push(setTimeout(endSession, Math.max(left, 0)));
  const fn = page === "messages" && id ? (m, p, c) => pages.message(m, p, c, id) : routes[page];
  if (!fn) {
    main.replaceChildren(notice("error", "There is no such page."));
    return;
  }
  try {
    await fn(main, params, ctx);
  } catch (e) {
    if (!refused && !$("app").hidden) main.append(notice("error", e.message));
  }
  if (document.activeElement === document.body) main.focus({ preventScroll: true });
}

async function boot() {
  $("signin-button").addEventListener("click", async () => {
    $("signin-button").disabled = true;
    sessionStorage.removeItem("sb.ended");
    try {
      await signIn();
    } catch (e) {
      $("signin-button").disabled = false;
      showSignIn("The sign-in could not start: " + e.message + ".");
    }
  });
  $("signout").addEventListener("click", () => { signOut(); showSignIn("You signed out."); });
  if (window.location.pathname.endsWith("/console/callback")) {
    const err = await completeSignIn(new URLSearchParams(window.location.search));
    window.history.replaceState(null, "", "/console/#/overview");
    if (err) {
      showSignIn(err);
      return;
    }
  }
  window.addEventListener("hashchange", render);
  render();
}

boot();
