// @ts-check
// Adapter for a generic JSON SMS gateway that signs its webhooks with Standard Webhooks.
//
// Request:  POST <baseUrl>messages, JSON {"to", "from", "text", "clientReference"} with
//           Idempotency-Key: the message's idempotency key (stable for a generation), so that
//           the gateway answers a repeated request with the first answer instead of sending twice.
// Answer:   202 {"id": "msg_…", "status": "queued"} (200 with the same body for a repeated key);
//           an error is {"error": {"code": "invalid_recipient", "message": "…"}} with 400 or 422;
//           409 while a request with the same key is still in flight; 429 with Retry-After.
// Callback: signed with webhook-id, webhook-timestamp and webhook-signature (the runtime's
//           standard-webhooks verifier checks them before receipt runs). The body is one event or
//           an array of events (batched):
//           {"type": "message.delivered", "timestamp": "…", "data": {"id": "msg_…",
//            "clientReference": "…", "error": {"code": "…"}}}.
//           Events whose type is not message.* (account notices on the same endpoint) are ignored.

var REPORTS = {
  "message.sent": "sent",
  "message.delivered": "delivered",
  "message.undelivered": "undelivered",
  "message.failed": "undelivered",
  "message.expired": "undelivered"
};

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  var headers = {"content-type": "application/json"};
  if (message.idempotencyKey !== null) {
    headers["idempotency-key"] = message.idempotencyKey;
  }
  return {
    target: "messages",
    headers: headers,
    bodyFormat: "json",
    body: {
      to: message.recipient,
      from: profile.sender,
      text: message.parts.text,
      clientReference: message.messageId
    }
  };
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// lookup reads table[key] only for the table's own keys (never "constructor", "toString", …).
function lookup(table, key) {
  return typeof key === "string" && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

// code turns the gateway's error code into a Switchboard code: "gateway." and the code with
// every character outside [A-Za-z0-9.:-] written as "-", at most 64 characters in all.
function code(raw, fallback) {
  var text = typeof raw === "string" && raw !== "" ? raw : fallback;
  return ("gateway." + text.replace(/[^A-Za-z0-9.:-]/g, "-")).substring(0, 64);
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
  var errorCode = isObject(body) && isObject(body.error) ? body.error.code : undefined;
  var c = code(errorCode, "http-" + status);
  if (status === 408 || status === 409 || status === 429 || status === 503) {
    return {outcome: "transient", code: c}; // the runtime honours Retry-After
  }
  if (status >= 500) {
    // The key makes a resend safe, but whether this one went is unknown.
    return {outcome: "maybe-sent", code: c};
  }
  return {outcome: "permanent", code: c};
}

function oneEvent(e) {
  if (!isObject(e) || typeof e.type !== "string" || e.type.indexOf("message.") !== 0) {
    return null;
  }
  if (!isObject(e.data) || typeof e.data.id !== "string" || e.data.id === "") {
    throw new Error("a message event without data.id");
  }
  var report = lookup(REPORTS, e.type);
  if (report === undefined) {
    return null; // message.queued, message.accepted, … are not delivery reports
  }
  var out = {providerReference: e.data.id, report: report};
  if (report === "undelivered") {
    out.code = code(isObject(e.data.error) ? e.data.error.code : undefined, e.type.substring(8));
  }
  return out;
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.Receipt | Switchboard.Receipt[] | null}
 */
function receipt(request) {
  var body = request.json;
  if (!Array.isArray(body)) {
    return oneEvent(body);
  }
  var out = [];
  for (var i = 0; i < body.length; i++) {
    var one = oneEvent(body[i]);
    if (one !== null) {
      out.push(one);
    }
  }
  return out.length > 0 ? out : null;
}
