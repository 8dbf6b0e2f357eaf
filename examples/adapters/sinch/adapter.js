// @ts-check
// Adapter for the Sinch SMS REST API (batches), with delivery reports and inbound messages.
//
// Request:  POST <baseUrl>{service_plan_id}/batches (baseUrl https://us.sms.api.sinch.com/xms/v1/
//           or eu.), JSON {"from", "to": ["+447…"], "body", "delivery_report": "per_recipient",
//           "callback_url"?, "client_reference"}; the service plan id is a runtime parameter
//           (servicePlanId) and the runtime adds Authorization: Bearer <API token>. Sinch SMS API
//           reference, "Batches: Send".
// Answer:   201 {"id": "01FC66621XXXXX119Z8PMV1QPQ", "to", "from", "body", "created_at", …}; an
//           error is {"code": "syntax_invalid_parameter_format", "text": "…"} with 400
//           (syntax_invalid_json, syntax_invalid_parameter_format, syntax_constraint_violation)
//           or 403 (blocked_account, illegal_number_type, missing_callback_url, …), 401 without
//           a valid token, 429 over the rate. Sinch, "HTTP status codes for the SMS REST API".
// Callback: per recipient (delivery_report per_recipient): {"type":
//           "recipient_delivery_report_sms", "batch_id", "recipient", "code", "status":
//           Queued | Dispatched | Delivered | Failed | Rejected | Aborted | Cancelled | Deleted |
//           Expired | Unknown, "at", "client_reference"}; per batch (summary or full):
//           {"type": "delivery_report_sms", "batch_id", "statuses": [{"code", "status", "count",
//           "recipients"?}]}. Sinch retries a callback that was not answered 2xx (5 s, 10 s, 20 s,
//           … up to 22 hours). Sinch, "Delivery reports" and "Webhooks".
// Inbound:  {"type": "mo_text", "id", "from", "to", "body", "received_at", "operator_id"} posted
//           to the service plan's callback URL (set in the dashboard; the same URL).
//
// Sinch signs SMS callbacks only on request to its support, with a scheme that has no verifier
// here: the callback URL carries a path token (the runtime's path-token verifier), and
// profile.callbackUrl includes it.

// status → report. Queued is not a delivery report; Unknown means the SMSC took the message
// but no delivery receipt came, which is as far as it is known to have gone.
var REPORTS = {
  Dispatched: "sent",
  Unknown: "sent",
  Delivered: "delivered",
  Failed: "undelivered",
  Rejected: "undelivered",
  Aborted: "undelivered",
  Cancelled: "undelivered",
  Deleted: "undelivered",
  Expired: "undelivered"
};

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// lookup reads table[key] only for the table's own keys (never "constructor", "toString", …).
function lookup(table, key) {
  return typeof key === "string" && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  var plan = profile.parameters.servicePlanId;
  if (typeof plan !== "string" || !/^[A-Za-z0-9]{1,64}$/.test(plan)) {
    throw new Error("the runtime file's parameters must give servicePlanId, the Sinch service plan id (letters and digits)");
  }
  /** @type {Record<string, unknown>} */
  var body = {
    from: profile.sender,
    to: [message.recipient],
    body: message.parts.text,
    delivery_report: "per_recipient",
    client_reference: message.messageId // echoed in every report; lets operators find it
  };
  if (profile.callbackUrl !== null) {
    body.callback_url = profile.callbackUrl;
  }
  return {target: plan + "/batches", headers: {"content-type": "application/json"}, bodyFormat: "json", body: body};
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  var body = response.body;
  if (status >= 200 && status < 300) {
    if (isObject(body) && typeof body.id === "string" && body.id !== "") {
      return {outcome: "accepted", providerReference: body.id};
    }
    return {outcome: "accepted"};
  }
  var sinchCode = isObject(body) && typeof body.code === "string" && /^[a-z0-9_]{1,50}$/.test(body.code) ? body.code : "";
  var code = sinchCode !== "" ? "sinch." + sinchCode.replace(/_/g, "-") : "sinch.http-" + status;
  if (status === 408 || status === 429 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}

// receiptOf turns one status of a batch into a receipt, or null.
function receiptOf(batchId, status, code) {
  var report = lookup(REPORTS, status);
  if (report === undefined) {
    return null;
  }
  var out = {providerReference: batchId, report: report};
  if (report === "undelivered") {
    out.code = typeof code === "number" && code >= 0 && code < 100000 ? "sinch." + code : "sinch." + status;
  }
  return out;
}

// inboundMessage reads an mo_text.
function inboundMessage(mo) {
  if (typeof mo.id !== "string" || mo.id === "" || typeof mo.from !== "string" || mo.from === "" || typeof mo.body !== "string") {
    throw new Error("a Sinch mo_text carries id, from and body");
  }
  /** @type {Switchboard.InboundMessage} */
  var item = {from: mo.from, to: typeof mo.to === "string" ? mo.to : "", text: mo.body, providerReference: mo.id};
  if (typeof mo.received_at === "string" && /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2})$/.test(mo.received_at)) {
    item.receivedAt = mo.received_at;
  }
  return item;
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.CallbackResult | null}
 */
function callback(request) {
  var b = request.json;
  if (!isObject(b) || typeof b.type !== "string") {
    throw new Error("a Sinch callback is a JSON object with type");
  }
  switch (b.type) {
    case "recipient_delivery_report_sms":
      if (typeof b.batch_id !== "string" || b.batch_id === "") {
        throw new Error("a Sinch delivery report carries batch_id");
      }
      var one = receiptOf(b.batch_id, b.status, b.code);
      return one === null ? null : {receipts: [one]};
    case "delivery_report_sms":
      if (typeof b.batch_id !== "string" || b.batch_id === "" || !Array.isArray(b.statuses)) {
        throw new Error("a Sinch batch delivery report carries batch_id and statuses");
      }
      var receipts = [];
      for (var i = 0; i < b.statuses.length; i++) {
        var s = b.statuses[i];
        var r = isObject(s) ? receiptOf(b.batch_id, s.status, s.code) : null;
        if (r !== null) {
          receipts.push(r);
        }
      }
      return receipts.length > 0 ? {receipts: receipts} : null;
    case "mo_text":
      return {inbound: [inboundMessage(b)]};
  }
  return null; // mo_binary, MMS and other types are not read
}
