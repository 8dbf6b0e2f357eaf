// The console's pages. Each renders into main and may register timers with ctx.every, which
// stop when the operator leaves the page. Nothing shows a recipient or content: the API never
// answers them, and the inbox page shows sizes, not payloads.

import { get, post, query, ApiError } from "./api.js";
import { h, badge, shortID, timeElement, when, clock, num, ago, table, pageHeader, notice, confirm, field, select, STATUS_LABELS } from "./ui.js";
import { lineChart, barChart, hbar } from "./chart.js";

const STATUSES = ["queued", "sending", "submitted", "delivered", "failed", "unknown", "cancelled", "expired"];
const DISPATCH = ["queued", "sending", "submitted", "failed", "unknown", "cancelled", "expired"];
const OUTCOMES = [["accepted", "Accepted"], ["transient", "Transient"], ["permanent", "Permanent"], ["maybe-sent", "Maybe sent"]];

function failure(main, err) {
  main.append(notice("error", err instanceof ApiError ? err.message : "Something went wrong: " + err.message));
}

function perSecond(counts, bucketSeconds) {
  return counts.map((c) => c / bucketSeconds);
}

const rate = (v) => (v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : String(Number(v.toFixed(2))));

// ---------------------------------------------------------------- overview

export async function overview(main, _params, ctx) {
  main.replaceChildren(pageHeader("Overview", "Queue and dispatch figures of this deployment, refreshed every 5 seconds."));
  const body = h("div", { class: "stack" });
  main.append(body);
  const render = async () => {
    let slo, fig, journal;
    try {
      [slo, fig, journal] = await Promise.all([get("/v1/slo"), get("/v1/figures"), get("/v1/audit/verification").catch(() => null)]);
    } catch (e) {
      body.replaceChildren();
      failure(body, e);
      return;
    }
    ctx.updateCounts(slo.dispatch);
    const held = slo.dispatch.unknown || 0;
    const cards = h("div", { class: "cards" },
      statCard("Held (unknown)", num(held), held > 0 ? "Waiting for an operator to settle" : "Nothing waits for a decision", held > 0 ? "warn" : "ok", "#/held"),
      statCard("Failed", num(slo.dispatch.failed || 0), "Can be retried", (slo.dispatch.failed || 0) > 0 ? "bad" : "", "#/failed"),
      statCard("Queued", num(slo.outbox.queuedEntries), "Oldest due " + ago(slo.outbox.oldestDueAgeMs), "", "#/messages?status=queued"),
      statCard("Sending", num(slo.outbox.claimedEntries), "Claimed under a lease", "", "#/messages?status=sending"));
    const bucket = fig.bucketSeconds;
    const sent = sumSeries(Object.values(fig.attempts).map((p) => p.accepted));
    const chart = h("section", { class: "panel", "aria-labelledby": "rate-title" },
      h("div", { class: "panel-head" }, h("h2", { id: "rate-title" }, "Accepted and sent per second"),
        legend([["Accepted", "s-accepted"], ["Sent to a provider", "s-sent"]])),
      lineChart("Messages accepted and sent per second over the last " + Math.round((fig.accepted.length * bucket) / 60) + " minutes",
        [{ cls: "s-accepted", values: perSecond(fig.accepted, bucket) }, { cls: "s-sent", values: perSecond(sent, bucket) }],
        Date.parse(fig.start), Date.parse(fig.end), rate, clock),
      fig.accepted.every((v) => v === 0) && sent.every((v) => v === 0) ? h("p", { class: "chart-empty" }, "No traffic in this window.") : null,
      h("p", { class: "fine" }, "Counted by this instance over the last " + Math.round((fig.accepted.length * bucket) / 60) +
        " minutes, in " + bucket + "-second buckets. Now: " + rate(last(fig.accepted) / bucket) + " accepted/s, " + rate(last(sent) / bucket) + " sent/s."));
    const total = DISPATCH.reduce((a, d) => a + (slo.dispatch[d] || 0), 0);
    const byState = h("section", { class: "panel", "aria-labelledby": "states-title" },
      h("div", { class: "panel-head" }, h("h2", { id: "states-title" }, "Messages by dispatch state")),
      h("ul", { class: "bars" }, DISPATCH.map((d) => h("li", {},
        h("a", { href: "#/messages?status=" + d, class: "bars-label" }, STATUS_LABELS[d]),
        hbar(total ? (slo.dispatch[d] || 0) / total : 0, "f-" + d),
        h("span", { class: "bars-value" }, num(slo.dispatch[d] || 0))))),
      h("p", { class: "fine" }, "Submitted includes delivered messages: the provider accepted them and may have reported since."));
    body.replaceChildren(cards, h("div", { class: "grid-2" }, chart, h("div", { class: "stack" }, byState, journalCard(journal))));
  };
  await render();
  ctx.every(5000, render);
}

function statCard(label, value, sub, tone, href) {
  return h("a", { class: "card stat " + (tone ? "tone-" + tone : ""), href },
    h("span", { class: "stat-label" }, label), h("span", { class: "stat-value" }, value), h("span", { class: "stat-sub" }, sub));
}

function legend(items) {
  return h("ul", { class: "legend" }, items.map(([label, cls]) => h("li", {}, h("span", { class: "swatch " + cls, "aria-hidden": "true" }), label)));
}

function sumSeries(list) {
  if (list.length === 0) return [];
  return list[0].map((_, i) => list.reduce((a, s) => a + (s[i] || 0), 0));
}

// last is the count of the newest complete bucket (the newest one is still filling).
const last = (a) => (a.length > 1 ? a[a.length - 2] : a[0] || 0);

function journalCard(j) {
  const p = h("section", { class: "panel", "aria-labelledby": "journal-title" },
    h("div", { class: "panel-head" }, h("h2", { id: "journal-title" }, "Journal"), h("a", { href: "#/journal" }, "Details")));
  p.append(journalSummary(j));
  return p;
}

function journalSummary(j) {
  if (!j) return h("p", { class: "muted" }, "The verification state could not be read.");
  switch (j.state) {
    case "none": return h("p", { class: "muted" }, "Not verified since this instance started.");
    case "running": return h("p", { class: "journal-state" }, h("span", { class: "dot dot-run" }), "Verifying…");
    case "failed": return h("p", { class: "journal-state bad" }, h("span", { class: "dot dot-bad" }), j.error || "The verification failed.");
  }
  return j.intact
    ? h("p", { class: "journal-state good" }, h("span", { class: "dot dot-ok" }), "Intact: " + num(j.records) + " records in " + num(j.writers) + " chains, verified " + when(j.finishedAt) + ".")
    : h("p", { class: "journal-state bad" }, h("span", { class: "dot dot-bad" }), j.breaks.length + " broken chain(s) found " + when(j.finishedAt) + ".");
}

// ---------------------------------------------------------------- message lists

function messageRows(list) {
  return list.map((m) => {
    const lastAttempt = m.attempts[m.attempts.length - 1];
    return h("tr", {},
      h("td", {}, timeElement(m.acceptedAt)),
      h("td", {}, h("a", { href: "#/messages/" + encodeURIComponent(m.id), class: "mono", title: m.id, "aria-label": "Message " + m.id }, shortID(m.id))),
      h("td", {}, badge(m.status)),
      h("td", {}, m.channel),
      h("td", {}, m.senderProfile),
      h("td", {}, m.template ? m.template.id + " v" + m.template.version : h("span", { class: "muted" }, "direct")),
      h("td", { class: "num" }, String(m.attempts.length)),
      h("td", { class: "mono small" }, m.reason ? m.reason.code : lastAttempt && lastAttempt.code ? lastAttempt.code : ""));
  });
}

// The code column is the message's reason when it has one (a report's code included), else its
// last attempt's.
const LIST_HEADERS = ["Accepted", "Message", "Status", "Channel", "Sender profile", "Template", "Attempts", "Code"];

// pagedList shows pages of GET /v1/messages for fixed filters, with Newer and Older.
function pagedList(filters, caption, empty) {
  const wrap = h("div", { class: "stack" });
  const cursors = [""];
  let at = 0;
  const load = async () => {
    let page;
    try {
      page = await get("/v1/messages" + query({ ...filters, after: cursors[at] || undefined, limit: 25 }));
    } catch (e) {
      wrap.replaceChildren();
      failure(wrap, e);
      return;
    }
    if (page.next) cursors[at + 1] = page.next;
    const newer = h("button", { class: "btn", type: "button", disabled: at === 0, onclick: () => { at--; load(); } }, "Newer");
    const older = h("button", { class: "btn", type: "button", disabled: !page.next, onclick: () => { at++; load(); } }, "Older");
    wrap.replaceChildren(table(caption, LIST_HEADERS, messageRows(page.messages), empty),
      h("div", { class: "pager" }, h("span", { class: "muted" }, "Page " + (at + 1) + " · " + page.messages.length + " shown"), newer, older));
  };
  wrap.reload = () => { cursors.length = 1; at = 0; return load(); };
  load();
  return wrap;
}

function localValue(date) {
  const d = new Date(date.getTime() - date.getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 16);
}

function isoOf(local) {
  return local ? new Date(local).toISOString() : undefined;
}

export async function messages(main, params) {
  const status = select("status", [["", "Any status"], ...STATUSES.map((s) => [s, STATUS_LABELS[s]])], params.get("status") || "");
  const channel = select("channel", [["", "Any channel"], ["email", "Email"], ["sms", "SMS"], ["peer", "Peer"]], params.get("channel") || "");
  const profile = h("input", { name: "senderProfile", type: "text", placeholder: "any", value: params.get("senderProfile") || "", autocomplete: "off", spellcheck: "false" });
  const after = h("input", { name: "acceptedAfter", type: "datetime-local", value: params.get("acceptedAfter") ? localValue(new Date(params.get("acceptedAfter"))) : "" });
  const before = h("input", { name: "acceptedBefore", type: "datetime-local", value: params.get("acceptedBefore") ? localValue(new Date(params.get("acceptedBefore"))) : "" });
  const form = h("form", { class: "filters", "aria-label": "Filter messages", onsubmit: (e) => {
    e.preventDefault();
    const q = query({ status: status.value, channel: channel.value, senderProfile: profile.value.trim(), acceptedAfter: isoOf(after.value), acceptedBefore: isoOf(before.value) });
    window.location.hash = "#/messages" + q;
  } },
  field("Status", status), field("Channel", channel), field("Sender profile", profile),
  field("Accepted from", after), field("Accepted before", before),
  h("div", { class: "filters-actions" }, h("button", { class: "btn btn-primary", type: "submit" }, "Apply filters"),
    h("a", { class: "btn btn-quiet", href: "#/messages" }, "Clear")));
  const filters = {};
  for (const k of ["status", "channel", "senderProfile", "acceptedAfter", "acceptedBefore"]) if (params.get(k)) filters[k] = params.get(k);
  main.replaceChildren(pageHeader("Messages", "Newest first. Open a message for its attempts, report and journal."),
    form, pagedList(filters, "Messages", "No message matches these filters."));
}

// ---------------------------------------------------------------- held and failed

export async function held(main, _params, ctx) {
  attentionPage(main, ctx, {
    title: "Held messages", status: "unknown",
    subtitle: "A provider may or may not have sent these: the dispatcher stopped rather than send twice. Settle each one once you know.",
    empty: "No message is held. Nothing waits for a decision.",
    bulkTitle: "Settle in bulk",
    bulkControls: () => {
      const outcome = select("outcome", [["sent", "Sent: the provider did send them"], ["not-sent", "Not sent: send them again"]], "sent");
      return { controls: [field("Settle as", outcome)], body: (f) => ({ action: "settle", outcome: outcome.value, filter: f }),
        verb: () => (outcome.value === "sent" ? "settled as sent" : "settled as not sent and sent again") };
    },
  });
}

export async function failed(main, _params, ctx) {
  attentionPage(main, ctx, {
    title: "Failed messages", status: "failed",
    subtitle: "These definitely failed (or were reported undelivered). A retry starts a new generation on the sender profile's provider.",
    empty: "No message has failed.",
    bulkTitle: "Retry in bulk",
    bulkControls: () => ({ controls: [], body: (f) => ({ action: "retry", filter: f }), verb: () => "retried" }),
  });
}

function attentionPage(main, ctx, o) {
  const list = pagedList({ status: o.status }, o.title, o.empty);
  main.replaceChildren(pageHeader(o.title, o.subtitle), bulkPanel(o, ctx, () => { list.reload(); ctx.refreshCounts(); }), list);
}

// bulkPanel previews an operation (count and sample), asks for confirmation, applies it and
// follows its progress.
function bulkPanel(o, ctx, done) {
  const extra = o.bulkControls();
  const before = h("input", { type: "datetime-local", name: "acceptedBefore", value: localValue(new Date(Date.now() + 60000)), required: true });
  const profile = h("input", { type: "text", name: "senderProfile", placeholder: "any", autocomplete: "off", spellcheck: "false" });
  const out = h("div", { class: "bulk-out", "aria-live": "polite" });
  const filter = () => ({ status: o.status, acceptedBefore: isoOf(before.value), senderProfile: profile.value.trim() || undefined });
  const preview = async (e) => {
    e.preventDefault();
    out.replaceChildren(h("p", { class: "muted" }, "Counting…"));
    let p;
    try {
      p = await post("/v1/operations", { ...extra.body(filter()), apply: false });
    } catch (err) {
      out.replaceChildren();
      failure(out, err);
      return;
    }
    if (p.count === 0) {
      out.replaceChildren(notice("info", "No message matches: nothing would change."));
      return;
    }
    const apply = h("button", { class: "btn btn-primary", type: "button", onclick: () => run(p) }, "Apply to " + num(p.count) + " messages…");
    out.replaceChildren(h("div", { class: "preview" },
      h("p", { class: "preview-count" }, h("strong", {}, num(p.count)), " messages would be " + extra.verb() + "."),
      h("p", { class: "muted small" }, "First of them: ", p.sample.slice(0, 8).map((id, i) => [i ? ", " : "", h("a", { href: "#/messages/" + id, class: "mono" }, shortID(id))])),
      apply));
    apply.focus();
  };
  const run = async (p) => {
    const ok = await confirm(o.bulkTitle, [h("p", {}, num(p.count) + " " + STATUS_LABELS[o.status].toLowerCase() + " messages accepted before " + when(filter().acceptedBefore) +
      (filter().senderProfile ? " of sender profile " + filter().senderProfile : "") + " will be " + extra.verb() + "."),
    h("p", { class: "muted" }, "Each change is journaled with your name. Messages that change state meanwhile are skipped.")], "Apply");
    if (!ok) return;
    let started;
    try {
      started = await post("/v1/operations", { ...extra.body(filter()), apply: true });
    } catch (err) {
      out.replaceChildren();
      failure(out, err);
      return;
    }
    const bar = h("progress", { max: String(Math.max(p.count, 1)), value: "0", id: "op-progress", "aria-label": "Operation progress" });
    const text = h("p", { class: "progress-text", role: "status" }, "Starting…");
    out.replaceChildren(h("div", { class: "progress-box", "data-operation": started.id }, h("label", { for: "op-progress", class: "sr-only" }, "Progress"), bar, text));
    const poll = async () => {
      let op;
      try {
        op = await get(started.links.self);
      } catch (err) {
        text.textContent = "The progress could not be read: " + err.message;
        return true;
      }
      bar.max = Math.max(op.total, op.done + op.failed, 1);
      bar.value = op.done + op.failed;
      const counts = num(op.done) + " of " + num(op.total) + " done" + (op.failed ? ", " + num(op.failed) + " skipped" : "");
      if (op.state === "running") {
        text.textContent = "Running: " + counts + ".";
        return false;
      }
      text.textContent = (op.state === "done" ? "Done: " : "Stopped: ") + counts + "." + (op.error ? " " + op.error : "");
      text.className = "progress-text " + (op.state === "done" ? "good" : "bad");
      out.firstChild.dataset.state = op.state;
      done();
      return true;
    };
    if (!(await poll())) ctx.every(500, async (stop) => { if (await poll()) stop(); });
  };
  return h("section", { class: "panel bulk", "aria-labelledby": "bulk-" + o.status },
    h("div", { class: "panel-head" }, h("h2", { id: "bulk-" + o.status }, o.bulkTitle)),
    h("form", { class: "filters", onsubmit: preview },
      extra.controls, field("Accepted before", before), field("Sender profile", profile),
      h("div", { class: "filters-actions" }, h("button", { class: "btn", type: "submit" }, "Preview"))),
    out);
}

// ---------------------------------------------------------------- one message

const ACTIONS = {
  unknown: [
    { label: "Settle as sent", path: "settle", body: { outcome: "sent" }, to: "submitted", says: "The provider did send it: it will not be sent again." },
    { label: "Settle as not sent", path: "settle", body: { outcome: "not-sent" }, to: "queued", gen: true, says: "It was not sent: it is queued again in a new generation." },
  ],
  failed: [{ label: "Retry", path: "retry", body: {}, to: "queued", gen: true, says: "It is queued again in a new generation, on the sender profile's provider." }],
  queued: [{ label: "Cancel", path: "cancel", body: undefined, to: "cancelled", says: "It will not be sent." }],
};

export async function message(main, params, ctx, id) {
  let m, journal;
  try {
    [m, journal] = await Promise.all([get("/v1/messages/" + encodeURIComponent(id)), get("/v1/messages/" + encodeURIComponent(id) + "/audit")]);
  } catch (e) {
    main.replaceChildren(pageHeader("Message", id));
    failure(main, e);
    return;
  }
  const status = h("span", { id: "message-status" }, badge(m.status));
  const actions = (ACTIONS[m.dispatch] || []).map((a) => h("button", { class: "btn " + (a.to === "cancelled" ? "btn-danger" : "btn-primary"), type: "button", onclick: () => act(a) }, a.label + "…"));
  const act = async (a) => {
    const gen = a.gen ? " (generation " + (m.generation + 1) + ")" : "";
    const ok = await confirm(a.label, [
      h("p", { class: "change" }, badge(m.status), h("span", { class: "arrow", "aria-label": "becomes" }, "→"), badge(a.to), gen),
      h("p", {}, a.says), h("p", { class: "muted small" }, "Message " + m.id + ". The change is journaled with your name.")], a.label);
    if (!ok) return;
    try {
      await post("/v1/messages/" + encodeURIComponent(m.id) + "/" + a.path, a.body);
    } catch (e) {
      main.prepend(notice("error", e.message));
      return;
    }
    ctx.rerender();
  };
  const facts = [
    ["Status", status], ["Dispatch", m.dispatch], ["Report", m.report + (m.reportedAt ? " · " + when(m.reportedAt) : "")],
    ...(m.reason ? [["Reason", h("span", { id: "message-reason" }, h("span", { class: "mono" }, m.reason.code), " · by " + m.reason.by)]] : []),
    ["Channel", m.channel], ["Sender profile", m.senderProfile],
    ["Template", m.template ? m.template.id + " version " + m.template.version : "direct content"],
    ["Recipient", Object.keys(m.to)[0] + " (redacted)"], ["Correlation id", m.correlationId || "—"],
    ["Accepted", timeElement(m.acceptedAt)], ["Not before", m.notBefore ? timeElement(m.notBefore) : "—"],
    ["Expires", timeElement(m.expiresAt)], ["Updated", timeElement(m.updatedAt)], ["Generation", String(m.generation)],
  ];
  main.replaceChildren(
    h("p", { class: "crumbs" }, h("a", { href: "#/messages" }, "← All messages")),
    pageHeader(h("span", {}, "Message ", h("span", { class: "mono title-id" }, m.id)), null, ...actions),
    h("div", { class: "grid-2" },
      h("section", { class: "panel", "aria-labelledby": "facts-title" }, h("h2", { id: "facts-title" }, "Details"),
        h("dl", { class: "facts" }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))),
      h("section", { class: "panel", "aria-labelledby": "attempts-title" }, h("h2", { id: "attempts-title" }, "Attempts"), timeline(m))),
    h("section", { class: "panel", "aria-labelledby": "mjournal-title" }, h("h2", { id: "mjournal-title" }, "Journal"),
      table("Journal records of this message, oldest first", ["Time", "Event", "Actor", "Outcome"],
        journal.records.map((r) => h("tr", {}, h("td", {}, timeElement(r.at)), h("td", { class: "mono small" }, r.event),
          h("td", { class: "mono small", title: r.actor }, r.actor.length > 24 ? shortID(r.actor) : r.actor), h("td", { class: "small" }, r.outcome))),
        "No journal record names this message.")));
}

function timeline(m) {
  if (m.attempts.length === 0) return h("p", { class: "muted" }, "No attempt yet.");
  return h("ol", { class: "timeline" }, m.attempts.map((a) => {
    const took = a.finishedAt ? Math.max(0, Date.parse(a.finishedAt) - Date.parse(a.startedAt)) : null;
    return h("li", { class: "tl-item tl-" + a.outcome },
      h("span", { class: "tl-dot", "aria-hidden": "true" }),
      h("div", { class: "tl-body" },
        h("p", { class: "tl-head" }, h("strong", {}, "Generation " + a.generation + ", attempt " + a.attempt), " ", h("span", { class: "outcome outcome-" + a.outcome }, a.outcome)),
        h("p", { class: "muted small" }, timeElement(a.startedAt), took !== null ? " · took " + (took < 1000 ? took + " ms" : (took / 1000).toFixed(1) + " s") : " · in progress",
          a.code ? [" · ", h("span", { class: "mono" }, a.code)] : "")));
  }));
}

// ---------------------------------------------------------------- providers

export async function providers(main, _params, ctx) {
  main.replaceChildren(pageHeader("Providers", "Attempts by outcome over the last minutes, refreshed every 5 seconds. A failing provider comes first."));
  const body = h("div", { class: "stack" });
  main.append(body);
  const render = async () => {
    let fig;
    try {
      fig = await get("/v1/figures");
    } catch (e) {
      body.replaceChildren();
      failure(body, e);
      return;
    }
    const rows = Object.entries(fig.attempts).map(([id, by]) => {
      const totals = Object.fromEntries(OUTCOMES.map(([k]) => [k, by[k].reduce((a, b) => a + b, 0)]));
      const all = Object.values(totals).reduce((a, b) => a + b, 0);
      const bad = totals.permanent + totals["maybe-sent"] + totals.transient;
      return { id, by, totals, all, share: all ? bad / all : 0 };
    });
    rows.sort((a, b) => (b.share >= 0.5) - (a.share >= 0.5) || b.all - a.all || a.id.localeCompare(b.id));
    body.replaceChildren(h("div", { class: "provider-grid" }, rows.map((r) => {
      const failing = r.all >= 3 && r.share >= 0.5;
      return h("section", { class: "panel provider" + (failing ? " failing" : ""), "aria-labelledby": "p-" + r.id },
        h("div", { class: "panel-head" }, h("h2", { id: "p-" + r.id, class: "mono" }, r.id),
          failing ? h("span", { class: "pill pill-bad" }, "Failing: " + Math.round(r.share * 100) + "% not accepted")
            : r.all ? h("span", { class: "pill pill-ok" }, Math.round((1 - r.share) * 100) + "% accepted") : h("span", { class: "pill" }, "No attempts")),
        barChart("Attempts of " + r.id + " by outcome", OUTCOMES.map(([k]) => ({ cls: "o-" + k, values: r.by[k] })),
          Date.parse(fig.start), Date.parse(fig.end), (v) => String(Math.round(v)), clock),
        h("ul", { class: "totals" }, OUTCOMES.map(([k, label]) => h("li", {}, h("span", { class: "swatch o-" + k, "aria-hidden": "true" }), label, h("strong", {}, num(r.totals[k]))))));
    })), h("p", { class: "fine" }, "Counted by this instance, in " + fig.bucketSeconds + "-second buckets. Transient failures are retried; maybe-sent ones are held when the sender profile says so."));
  };
  await render();
  ctx.every(5000, render);
}

// ---------------------------------------------------------------- inbox

export async function inbox(main) {
  main.replaceChildren(pageHeader("Inbox", "Messages received from peers, oldest first. Payloads are not shown here."));
  const wrap = h("div", { class: "stack" });
  main.append(wrap);
  const cursors = [""];
  let at = 0;
  const load = async () => {
    let page;
    try {
      page = await get("/v1/inbox" + query({ after: cursors[at] || undefined, limit: 50 }));
    } catch (e) {
      wrap.replaceChildren();
      failure(wrap, e);
      return;
    }
    if (page.entries.length === 50) cursors[at + 1] = page.next;
    wrap.replaceChildren(table("Received peer messages", ["Received", "From peer", "Protocol", "Message id", "Size"],
      page.entries.map((e) => h("tr", {}, h("td", {}, timeElement(e.receivedAt)), h("td", { class: "mono small", title: e.from }, shortID(e.from)),
        h("td", { class: "mono small" }, e.protocol), h("td", { class: "mono small", title: e.messageId }, shortID(e.messageId)),
        h("td", { class: "num" }, e.payloadErased ? "erased" : num(e.payloadBytes) + " B"))),
      "The inbox is empty: no peer has sent a message yet."),
    h("div", { class: "pager" }, h("button", { class: "btn", type: "button", disabled: at === 0, onclick: () => { at--; load(); } }, "Previous"),
      h("button", { class: "btn", type: "button", disabled: !cursors[at + 1], onclick: () => { at++; load(); } }, "Next")));
  };
  await load();
}

// ---------------------------------------------------------------- journal

export async function journal(main, _params, ctx) {
  const state = h("div", { "aria-live": "polite" });
  const verify = h("button", { class: "btn btn-primary", type: "button", onclick: async () => {
    try {
      await post("/v1/audit/verification", {});
    } catch (e) {
      failure(state, e);
      return;
    }
    render();
  } }, "Verify now");
  main.replaceChildren(pageHeader("Journal", "Every change is journaled in the same transaction, chained by a keyed MAC. Verification walks every chain.", verify),
    h("section", { class: "panel" }, h("h2", {}, "Verification"), state));
  const render = async () => {
    let j;
    try {
      j = await get("/v1/audit/verification");
    } catch (e) {
      state.replaceChildren();
      failure(state, e);
      return;
    }
    verify.disabled = j.state === "running";
    const rows = [["State", j.state], ["Started", j.startedAt ? timeElement(j.startedAt) : "—"], ["Finished", j.finishedAt ? timeElement(j.finishedAt) : "—"],
      ["Chains", num(j.writers)], ["Records verified", num(j.records)]];
    state.replaceChildren(...[journalSummary(j), h("dl", { class: "facts" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
      j.breaks.length ? table("Broken chains", ["Writer", "Record", "Kind", "Detail"],
        j.breaks.map((b) => h("tr", {}, h("td", { class: "mono small" }, b.writer), h("td", { class: "num" }, String(b.seq)), h("td", {}, b.kind), h("td", {}, b.detail))), "") : null].filter(Boolean));
  };
  await render();
  ctx.every(1000, render);
}
