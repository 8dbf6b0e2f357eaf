// Small DOM helpers. Every text goes in through textContent: nothing the API answers is ever
// parsed as HTML.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export const STATUS_LABELS = {
  queued: "Queued", sending: "Sending", submitted: "Submitted", delivered: "Delivered",
  failed: "Failed", unknown: "Held", cancelled: "Cancelled", expired: "Expired",
};

export function badge(status) {
  return h("span", { class: "badge badge-" + status }, STATUS_LABELS[status] || status);
}

export function shortID(id) {
  return id.length > 13 ? id.slice(0, 8) + "…" + id.slice(-4) : id;
}

const timeFmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const clockFmt = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const numberFmt = new Intl.NumberFormat();

export function when(iso) {
  if (!iso) return "—";
  return timeFmt.format(new Date(iso));
}

export function timeElement(iso) {
  if (!iso) return "—";
  return h("time", { datetime: iso, title: iso }, when(iso));
}

export function clock(date) { return clockFmt.format(date); }
export function num(n) { return numberFmt.format(n); }

export function ago(ms) {
  if (!ms) return "—";
  const s = Math.round(ms / 1000);
  if (s < 60) return s + " s";
  if (s < 3600) return Math.round(s / 60) + " min";
  if (s < 86400) return (s / 3600).toFixed(1) + " h";
  return (s / 86400).toFixed(1) + " d";
}

// table builds a table with a caption (read by screen readers), headers and rows; an empty
// list shows the empty message in place of rows.
export function table(caption, headers, rows, empty) {
  const t = h("table", { class: "table" },
    h("caption", { class: "sr-only" }, caption),
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))));
  const body = h("tbody");
  if (rows.length === 0) {
    body.append(h("tr", {}, h("td", { colspan: String(headers.length), class: "empty" }, empty)));
  }
  for (const r of rows) body.append(r);
  t.append(body);
  return h("div", { class: "table-wrap" }, t);
}

export function pageHeader(title, subtitle, ...actions) {
  return h("div", { class: "page-header" },
    h("div", {}, h("h1", {}, title), subtitle ? h("p", { class: "subtitle" }, subtitle) : null),
    h("div", { class: "page-actions" }, actions));
}

export function notice(kind, text) {
  return h("p", { class: "notice notice-" + kind, role: kind === "error" ? "alert" : "status" }, text);
}

// confirm opens the confirmation dialog and resolves true when the operator confirms.
export function confirm(title, body, okLabel) {
  const d = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  const b = document.getElementById("confirm-body");
  b.replaceChildren(...(Array.isArray(body) ? body : [body]));
  document.getElementById("confirm-ok").textContent = okLabel || "Confirm";
  return new Promise((resolve) => {
    d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    d.returnValue = "";
    d.showModal();
  });
}

let labelSeq = 0;
// field wraps a control with its visible label.
export function field(label, control) {
  if (!control.id) control.id = "f" + ++labelSeq;
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control);
}

export function select(name, options, value) {
  const s = h("select", { name });
  for (const [v, label] of options) s.append(h("option", { value: v, selected: v === value }, label));
  return s;
}
