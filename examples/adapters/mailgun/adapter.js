// @ts-check
// Adapter for Mailgun (the Messages API), carrying the email channel, with signed webhooks and
// inbound mail from a route's forward().
//
// Request:  POST <baseUrl>{domain}/messages (baseUrl https://api.mailgun.net/v3/, or
//           https://api.eu.mailgun.net/v3/), form {from, to, subject, text, html?,
//           v:switchboard-message-id}; the sending domain is a runtime parameter (domain) and the
//           runtime adds basic authentication (api, API key). Mailgun API reference, "Messages".
// Answer:   200 {"id": "<20260302090001.1.5A3F…@mg.example.org>", "message": "Queued. Thank
//           you."}; an error is {"message": "…"} (or the text Forbidden) with 400 (a bad
//           parameter), 401, 402 or 403 (the domain may not send), 404 (no such domain), 413,
//           429 (rate limited) or 500. Mailgun, "API responses".
// Callback: a webhook per event, JSON {"signature": {"timestamp", "token", "signature"},
//           "event-data": {"event": accepted | delivered | failed | rejected | opened | clicked |
//           complained | unsubscribed, "severity": permanent | temporary (failed), "reason",
//           "delivery-status": {"code", "message"}, "message": {"headers": {"message-id"}},
//           …}}; the runtime's mailgun verifier checks the signature. Mailgun retries a webhook
//           that was not answered 2xx for 8 hours. Mailgun, "Webhooks" and "Webhook payloads".
// Inbound:  a route whose action is forward("{callback URL}"): a form POST {recipient, sender,
//           from, subject, body-plain, stripped-text, Message-Id, timestamp, token, signature}
//           (multipart/form-data instead when the mail has attachments, which is not read here).
//           Mailgun, "Receiving messages via HTTP through a forward() action".
//
// The message id is written with angle brackets in the answer and without them in events: both
// sides drop them.

// Events that are delivery reports. failed depends on severity (below).
var REPORTS = {
  delivered: "delivered",
  opened: "delivered",
  clicked: "delivered",
  rejected: "undelivered"
};

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// lookup reads table[key] only for the table's own keys (never "constructor", "toString", …).
function lookup(table, key) {
  return typeof key === "string" && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

// messageId drops the angle brackets of a Message-Id.
function messageId(id) {
  return typeof id === "string" ? id.replace(/^\s*</, "").replace(/>\s*$/, "") : "";
}

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  var domain = profile.parameters.domain;
  if (typeof domain !== "string" || !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(domain) || domain.indexOf("..") >= 0) {
    throw new Error("the runtime file's parameters must give domain, the Mailgun sending domain");
  }
  /** @type {Record<string, string>} */
  var form = {
    from: profile.sender,
    to: message.recipient,
    subject: message.parts.subject,
    text: message.parts.text,
    "v:switchboard-message-id": message.messageId // in every event's user-variables
  };
  if (typeof message.parts.html === "string" && message.parts.html !== "") {
    form.html = message.parts.html;
  }
  return {
    target: domain + "/messages",
    headers: {"content-type": "application/x-www-form-urlencoded"},
    bodyFormat: "form",
    body: form
  };
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  var body = response.body;
  if (status >= 200 && status < 300) {
    var id = isObject(body) ? messageId(body.id) : "";
    return id !== "" ? {outcome: "accepted", providerReference: id} : {outcome: "accepted"};
  }
  var code = "mailgun.http-" + status;
  if (status === 408 || status === 429 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}

// eventReport reads a webhook's event-data.
function eventReport(e) {
  var headers = isObject(e.message) && isObject(e.message.headers) ? e.message.headers : {};
  var ref = messageId(headers["message-id"]);
  if (ref === "") {
    return null;
  }
  var report = lookup(REPORTS, e.event);
  if (e.event === "failed") {
    if (e.severity !== "permanent") {
      return null; // temporary: Mailgun is still retrying
    }
    report = "undelivered";
  }
  if (report === undefined) {
    return null; // accepted (not yet passed on), complained, unsubscribed, …
  }
  var out = {providerReference: ref, report: report};
  if (report === "undelivered") {
    var ds = isObject(e["delivery-status"]) ? e["delivery-status"] : {};
    var reason = typeof e.reason === "string" && /^[a-z0-9-]{1,40}$/.test(e.reason) ? e.reason : e.event;
    out.code = "mailgun." + reason;
    if (typeof ds.code === "number" && ds.code >= 200 && ds.code < 600) {
      out.code += "." + ds.code;
    }
  }
  return out;
}

// inboundMail reads a route's forward() of a parsed message.
function inboundMail(form) {
  var ref = messageId(form["Message-Id"]);
  var from = typeof form.sender === "string" && form.sender !== "" ? form.sender : form.from;
  if (ref === "" || typeof from !== "string" || from === "" || typeof form["body-plain"] !== "string") {
    throw new Error("a Mailgun forwarded message carries Message-Id, sender and body-plain");
  }
  return {from: from, to: typeof form.recipient === "string" ? form.recipient : "", text: form["body-plain"], providerReference: ref};
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.CallbackResult | null}
 */
function callback(request) {
  if (isObject(request.form)) {
    return {inbound: [inboundMail(request.form)]};
  }
  var e = isObject(request.json) ? request.json["event-data"] : null;
  if (!isObject(e) || typeof e.event !== "string") {
    throw new Error("a Mailgun webhook is JSON with event-data, or a route's form");
  }
  var report = eventReport(e);
  return report === null ? null : {receipts: [report]};
}
