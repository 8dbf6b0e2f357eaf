// @ts-check
// Adapter for Telnyx Messaging (SMS), with delivery webhooks and inbound messages.
//
// Request:  POST <baseUrl>messages (baseUrl https://api.telnyx.com/v2/), JSON {"from", "to",
//           "text", "webhook_url"?, "use_profile_webhooks"?}: webhook_url is where Telnyx posts
//           this message's events (profile.callbackUrl); the runtime adds Authorization:
//           Bearer <API key>. Telnyx API reference, "Send a message".
// Answer:   200 {"data": {"record_type": "message", "id": "40385f64-…", "to": [{"status":
//           "queued", …}], …}}; an error is {"errors": [{"code": "10002", "title": "Invalid
//           phone number", "detail": "…", "source": {…}}]} with 400, 401, 403, 404, 422 or 429.
//           Telnyx, "API error codes" and "Messaging error codes" (10xxx request errors, 40xxx
//           delivery errors).
// Callback: JSON {"data": {"event_type": "message.sent" | "message.finalized" |
//           "message.received", "id", "occurred_at", "payload": {"id", "to": [{"phone_number",
//           "status": sent | delivered | delivery_failed | sending_failed |
//           delivery_unconfirmed}], "errors": [{"code", "title"}], …}}, "meta": {"attempt"}}
//           signed with telnyx-signature-ed25519 over "timestamp|body" (the runtime's ed25519
//           verifier checks it). Telnyx retries a webhook it did not see answered, with a new
//           timestamp. Telnyx, "Receiving webhooks for Telnyx Messaging".
// Inbound:  message.received to the messaging profile's webhook URL (set it to the same URL):
//           payload {"id", "direction": "inbound", "from": {"phone_number"}, "to":
//           [{"phone_number"}], "text", "received_at"}.

// The status of a message.sent or message.finalized payload's recipient → report.
var REPORTS = {
  sent: "sent",
  delivered: "delivered",
  delivery_failed: "undelivered",
  sending_failed: "undelivered",
  delivery_unconfirmed: "sent" // final for Telnyx, but the carrier never confirmed delivery
};

// Request error codes (10xxx) that mean "not now".
var TRANSIENT_CODES = {
  "10007": true, // unexpected error
  "10008": true, // request timeout
  "10011": true  // too many requests
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
  /** @type {Record<string, unknown>} */
  var body = {from: profile.sender, to: message.recipient, text: message.parts.text};
  if (profile.callbackUrl !== null) {
    body.webhook_url = profile.callbackUrl;
  }
  return {target: "messages", headers: {"content-type": "application/json"}, bodyFormat: "json", body: body};
}

// firstErrorCode is the code of an answer's or a payload's first error, or "".
function firstErrorCode(errors) {
  if (!Array.isArray(errors) || !isObject(errors[0])) {
    return "";
  }
  var code = errors[0].code;
  return (typeof code === "string" || typeof code === "number") && /^[0-9]{1,8}$/.test(String(code)) ? String(code) : "";
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  var body = response.body;
  if (status >= 200 && status < 300) {
    var data = isObject(body) ? body.data : null;
    if (isObject(data) && typeof data.id === "string" && data.id !== "") {
      return {outcome: "accepted", providerReference: data.id};
    }
    return {outcome: "accepted"};
  }
  var telnyxCode = isObject(body) ? firstErrorCode(body.errors) : "";
  var code = telnyxCode !== "" ? "telnyx." + telnyxCode : "telnyx.http-" + status;
  if (lookup(TRANSIENT_CODES, telnyxCode) || status === 408 || status === 429 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}

// statusReport reads message.sent or message.finalized.
function statusReport(payload) {
  var to = Array.isArray(payload.to) && isObject(payload.to[0]) ? payload.to[0] : null;
  var report = to === null ? undefined : lookup(REPORTS, to.status);
  if (report === undefined || typeof payload.id !== "string" || payload.id === "") {
    return null;
  }
  var out = {providerReference: payload.id, report: report};
  if (report === "undelivered") {
    var code = firstErrorCode(payload.errors);
    out.code = code !== "" ? "telnyx." + code : "telnyx." + to.status.replace(/_/g, "-");
  }
  return out;
}

// inboundMessage reads message.received.
function inboundMessage(payload) {
  var from = isObject(payload.from) ? payload.from.phone_number : null;
  if (typeof payload.id !== "string" || payload.id === "" || typeof from !== "string" || from === "") {
    throw new Error("a Telnyx message.received carries an id and from.phone_number");
  }
  var to = Array.isArray(payload.to) && isObject(payload.to[0]) && typeof payload.to[0].phone_number === "string" ?
    payload.to[0].phone_number : "";
  /** @type {Switchboard.InboundMessage} */
  var item = {from: from, to: to, text: typeof payload.text === "string" ? payload.text : "", providerReference: payload.id};
  if (typeof payload.received_at === "string" && /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2})$/.test(payload.received_at)) {
    item.receivedAt = payload.received_at;
  }
  return item;
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.CallbackResult | null}
 */
function callback(request) {
  var data = isObject(request.json) ? request.json.data : null;
  if (!isObject(data) || typeof data.event_type !== "string" || !isObject(data.payload)) {
    throw new Error("a Telnyx webhook is {\"data\": {\"event_type\", \"payload\"}}");
  }
  switch (data.event_type) {
    case "message.sent":
    case "message.finalized":
      var report = statusReport(data.payload);
      return report === null ? null : {receipts: [report]};
    case "message.received":
      return {inbound: [inboundMessage(data.payload)]};
  }
  return null; // another product's event
}
