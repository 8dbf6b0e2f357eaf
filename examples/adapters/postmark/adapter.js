// @ts-check
// Adapter for Postmark (the Email API), carrying the email channel, with webhooks for delivery,
// bounces, opens and clicks, and the inbound webhook.
//
// Request:  POST <baseUrl>email (baseUrl https://api.postmarkapp.com/), JSON {"From", "To",
//           "Subject", "TextBody", "HtmlBody"?, "MessageStream", "Metadata"}; Accept:
//           application/json, and the runtime adds X-Postmark-Server-Token. Postmark API
//           reference, "Email API: send a single email".
// Answer:   200 {"To", "SubmittedAt", "MessageID": "…", "ErrorCode": 0, "Message": "OK"}; an
//           error is {"ErrorCode": 300, "Message": "…"} with 422 (300 invalid email request, 406
//           inactive recipient, 405 not allowed to send, …), 401 (10 bad or missing API token),
//           429 (rate limited) or 500. Postmark, "API overview: HTTP response codes" and "API
//           error codes".
// Callback: JSON by record type: {"RecordType": "Delivery", "MessageID", "Recipient",
//           "DeliveredAt", …}, {"RecordType": "Bounce", "Type": HardBounce | SoftBounce |
//           Transient | …, "TypeCode", "MessageID", "Email", "BouncedAt", …}, "Open", "Click",
//           "SpamComplaint", "SubscriptionChange". Postmark does not sign webhooks: it supports
//           basic authentication in the webhook URL (the runtime's basic verifier checks it) and
//           retries a webhook that was not answered 2xx. Postmark, "Webhooks overview" and each
//           webhook's page.
// Inbound:  the inbound stream's webhook: {"From", "FromFull": {"Email"}, "To", "ToFull",
//           "OriginalRecipient", "Subject", "MessageID", "TextBody", "StrippedTextReply", …},
//           without RecordType (or "Inbound"). Postmark, "Inbound webhook".

// Bounce types that end delivery. Transient (a delay), AutoResponder, AddressChange,
// Subscribe, Unsubscribe and similar are not delivery reports.
var FINAL_BOUNCES = {
  HardBounce: true,
  SoftBounce: true,
  BadEmailAddress: true,
  Blocked: true,
  DnsError: true,
  ManuallyDeactivated: true,
  SMTPApiError: true,
  DMARCPolicy: true,
  TemplateRenderingFailed: true,
  SpamNotification: true
};

// API error codes that mean "not now".
var TRANSIENT_CODES = {
  "405": true // not allowed to send: the account ran out of credits or is paused
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
  var stream = profile.parameters.messageStream;
  /** @type {Record<string, unknown>} */
  var body = {
    From: profile.sender,
    To: message.recipient,
    Subject: message.parts.subject,
    TextBody: message.parts.text,
    MessageStream: typeof stream === "string" && stream !== "" ? stream : "outbound",
    Metadata: {"switchboard-message-id": message.messageId} // echoed in every webhook
  };
  if (typeof message.parts.html === "string" && message.parts.html !== "") {
    body.HtmlBody = message.parts.html;
  }
  return {
    target: "email",
    headers: {"content-type": "application/json", accept: "application/json"},
    bodyFormat: "json",
    body: body
  };
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  var body = response.body;
  var errorCode = isObject(body) && (typeof body.ErrorCode === "number" || typeof body.ErrorCode === "string") &&
    /^[0-9]{1,6}$/.test(String(body.ErrorCode)) ? String(body.ErrorCode) : "";
  if (status >= 200 && status < 300 && (errorCode === "" || errorCode === "0")) {
    if (isObject(body) && typeof body.MessageID === "string" && body.MessageID !== "") {
      return {outcome: "accepted", providerReference: body.MessageID};
    }
    return {outcome: "accepted"};
  }
  var code = errorCode !== "" && errorCode !== "0" ? "postmark." + errorCode : "postmark.http-" + status;
  if (lookup(TRANSIENT_CODES, errorCode) || status === 408 || status === 429 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}

/**
 * eventReport reads a webhook with a RecordType.
 * @returns {Switchboard.Receipt | null}
 */
function eventReport(e) {
  if (typeof e.MessageID !== "string" || e.MessageID === "") {
    return null;
  }
  switch (e.RecordType) {
    case "Delivery":
    case "Open":
    case "Click":
      return {providerReference: e.MessageID, report: "delivered"};
    case "Bounce":
      if (!lookup(FINAL_BOUNCES, e.Type)) {
        return null;
      }
      return {providerReference: e.MessageID, report: "undelivered", code: "postmark." + e.Type};
  }
  return null; // SpamComplaint, SubscriptionChange, …
}

// inboundMail reads the inbound webhook.
function inboundMail(e) {
  var from = isObject(e.FromFull) && typeof e.FromFull.Email === "string" && e.FromFull.Email !== "" ? e.FromFull.Email : e.From;
  if (typeof e.MessageID !== "string" || e.MessageID === "" || typeof from !== "string" || from === "") {
    throw new Error("a Postmark inbound webhook carries MessageID and From");
  }
  var to = typeof e.OriginalRecipient === "string" ? e.OriginalRecipient :
    Array.isArray(e.ToFull) && isObject(e.ToFull[0]) && typeof e.ToFull[0].Email === "string" ? e.ToFull[0].Email : "";
  return {from: from, to: to, text: typeof e.TextBody === "string" ? e.TextBody : "", providerReference: e.MessageID};
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.CallbackResult | null}
 */
function callback(request) {
  var e = request.json;
  if (!isObject(e)) {
    throw new Error("a Postmark webhook is a JSON object");
  }
  if (e.RecordType === undefined || e.RecordType === "Inbound") {
    return {inbound: [inboundMail(e)]};
  }
  var report = eventReport(e);
  return report === null ? null : {receipts: [report]};
}
