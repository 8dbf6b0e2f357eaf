// @ts-check
// Adapter for the Vonage SMS API.
//
// Request:  POST <baseUrl>sms/json (baseUrl https://rest.nexmo.com/), form-encoded
//           {from, to, text, type?, client-ref, status-report-req}; "to" and a numeric "from" are
//           digits without "+"; type is "unicode" when the text needs more than GSM-7. The runtime
//           adds basic authentication (API key, API secret).
// Answer:   200 {"message-count": "2", "messages": [{"message-id": "0A00000012345678",
//           "status": "0", …}, …]}: one entry per part of a long message; status "0" is taken,
//           any other status is Vonage's error code for that part. Vonage answers 200 even then.
// Callback: a delivery receipt per part (POST form or POST-JSON), signed with sig and timestamp
//           (the runtime's vonage-signature verifier checks them before receipt runs):
//           {messageId, status, err-code, msisdn, to, client-ref, message-timestamp, …}.
// Inbound:  an SMS to the virtual number, posted to the same URL when the number's inbound
//           webhook names it (POST form or POST-JSON, signed the same way):
//           {msisdn (the sender), to, messageId, text, type, keyword, message-timestamp, …}.
//           Vonage posts it again until it gets a 200; the store keeps one per messageId.
//
// Provider references: the Vonage message id of the first part, normalised the same way in
// interpret and receipt (upper case, leading zeros dropped). Relays that pass SMPP receipts on
// are known to re-render ids (hex in another case, a leading zero lost); Vonage's own receipts
// repeat the id as sent, and then the normalisation changes nothing. A long message's report
// follows its first part: receipts for the other parts carry other ids, match no message, and
// are counted as unmatched.

// Vonage send statuses that mean "not now" rather than "never".
var TRANSIENT_STATUSES = {
  "1": true,  // Throttled
  "5": true,  // Internal Error
  "9": true,  // Partner Quota Violation (not enough credit: top up)
  "10": true  // Too Many Existing Binds
};

// Delivery receipt status → report; "unknown" (no final word from the carrier) is ignored.
var REPORTS = {
  accepted: "sent",     // accepted by the carrier
  buffered: "sent",     // held by the carrier (handset unreachable for now)
  delivered: "delivered",
  expired: "undelivered",
  failed: "undelivered",
  rejected: "undelivered"
};

// The GSM 03.38 default alphabet and its extension table; anything else needs type=unicode.
var GSM7 = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà" + "^{}\\[~]|€\f";

function isGSM7(text) {
  for (var i = 0; i < text.length; i++) {
    if (GSM7.indexOf(text.charAt(i)) < 0) {
      return false;
    }
  }
  return true;
}

function digitsOnly(number) {
  return /^\+[0-9]{6,15}$/.test(number) ? number.substring(1) : number;
}

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  var form = {
    from: digitsOnly(profile.sender), // alphanumeric senders pass as they are
    to: digitsOnly(message.recipient),
    text: message.parts.text,
    "client-ref": message.messageId,
    "status-report-req": "1"
  };
  if (!isGSM7(message.parts.text)) {
    form.type = "unicode";
  }
  return {
    target: "sms/json",
    headers: {"content-type": "application/x-www-form-urlencoded"},
    bodyFormat: "form",
    body: form
  };
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// lookup reads table[key] only for the table's own keys (never "constructor", "toString", …).
function lookup(table, key) {
  return typeof key === "string" && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

// normalizeReference makes the id of the send answer and of a receipt compare equal.
function normalizeReference(id) {
  if (typeof id !== "string") {
    return "";
  }
  var upper = id.trim().toUpperCase();
  var stripped = upper.replace(/^0+/, "");
  return stripped === "" ? upper : stripped;
}

function text(v) {
  return typeof v === "number" ? String(v) : typeof v === "string" ? v : "";
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  if (status !== 200) {
    var code = "vonage.http-" + status;
    if (status === 408 || status === 429 || status === 503) {
      return {outcome: "transient", code: code}; // the runtime honours Retry-After
    }
    if (status === 500 || status === 502 || status === 504) {
      return {outcome: "maybe-sent", code: code};
    }
    return {outcome: "permanent", code: code};
  }
  var body = response.body;
  if (!isObject(body) || !Array.isArray(body.messages) || body.messages.length === 0) {
    // A 200 we cannot read: Vonage may have taken the message.
    return {outcome: "maybe-sent", code: "vonage.answer-unreadable"};
  }
  var taken = null;
  var refused = null;
  for (var i = 0; i < body.messages.length; i++) {
    var part = body.messages[i];
    var partStatus = isObject(part) ? text(part.status) : "";
    if (partStatus === "0" && taken === null) {
      taken = part;
    } else if (partStatus !== "0" && refused === null) {
      refused = partStatus === "" ? "unknown" : partStatus;
    }
  }
  if (taken !== null) {
    /** @type {Switchboard.Interpretation} */
    var out = {outcome: "accepted"};
    var ref = normalizeReference(taken["message-id"]);
    if (ref !== "") {
      out.providerReference = ref;
    }
    if (refused !== null) {
      out.code = "vonage.partial-status-" + refused; // some parts were refused
    }
    return out;
  }
  var statusCode = "vonage.status-" + refused;
  if (lookup(TRANSIENT_STATUSES, refused)) {
    return {outcome: "transient", code: statusCode};
  }
  return {outcome: "permanent", code: statusCode};
}

// deliveryReceipt reads a delivery receipt (it carries status).
function deliveryReceipt(p, status) {
  var report = lookup(REPORTS, status);
  if (report === undefined) {
    return null; // "unknown": the carrier gave no final word; the report stays where it is
  }
  var out = {providerReference: normalizeReference(text(p.messageId)), report: report};
  if (report === "undelivered") {
    var err = text(p["err-code"]);
    out.code = /^[0-9]{1,6}$/.test(err) ? "vonage.dlr-" + err : "vonage.dlr-" + status;
  }
  return out;
}

// inboundMessage reads an inbound SMS (no status; msisdn and text). message-timestamp is UTC,
// written "YYYY-MM-DD HH:MM:SS".
function inboundMessage(p) {
  var from = text(p.msisdn);
  if (from === "" || typeof p.text !== "string") {
    throw new Error("an inbound Vonage SMS carries msisdn and text");
  }
  var out = {from: from, to: text(p.to), text: p.text, providerReference: text(p.messageId)};
  var ts = text(p["message-timestamp"]);
  if (/^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$/.test(ts)) {
    out.receivedAt = ts.replace(" ", "T") + "Z";
  }
  return out;
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.CallbackResult | null}
 */
function callback(request) {
  var p = isObject(request.form) ? request.form : isObject(request.json) ? request.json : request.query;
  if (!isObject(p) || normalizeReference(text(p.messageId)) === "") {
    throw new Error("a Vonage callback carries messageId");
  }
  var status = text(p.status);
  if (status === "") {
    return {inbound: [inboundMessage(p)]};
  }
  var receipt = deliveryReceipt(p, status);
  return receipt === null ? null : {receipts: [receipt]};
}
