// @ts-check
// Adapter for Twilio Programmable Messaging (SMS).
//
// Request:  POST <baseUrl>Messages.json, form-encoded {To, From | MessagingServiceSid, Body,
//           StatusCallback?}: StatusCallback is profile.callbackUrl for a sender number. baseUrl is https://api.twilio.com/2010-04-01/Accounts/{AccountSid}/
//           and the runtime adds basic authentication (Account SID, Auth Token).
// Answer:   201 {"sid": "SM…", "status": "queued", …}; an error is
//           {"code": 21211, "message": "…", "more_info": "…", "status": 400}.
// Callback: form POST {MessageSid, MessageStatus, ErrorCode?, …}, signed with
//           X-Twilio-Signature (the runtime's `twilio` verifier checks it before callback runs).
//           Callbacks may come twice or out of order; the store only moves a report forward.
// Inbound:  an SMS to the number, posted to the same URL when the number's messaging webhook
//           names it: form POST {MessageSid, From, To, Body, SmsStatus: "received", …}, signed
//           the same way. Twilio retries it with the same MessageSid; the store keeps it once.

// Twilio error codes that mean "not now" rather than "never".
var TRANSIENT_CODES = {
  "20429": true, // Too Many Requests
  "21611": true  // this sender has too many queued messages
};

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  var form = {To: message.recipient, Body: message.parts.text};
  if (/^MG[0-9a-fA-F]{32}$/.test(profile.sender)) {
    form.MessagingServiceSid = profile.sender; // Twilio picks the number from the service
  } else {
    form.From = profile.sender;
  }
  // Where Twilio posts this message's status callbacks: the public URL of the callback route
  // (profile.callbackUrl, from the runtime file's publicUrl). A Messaging Service posts them
  // to the status callback URL set on the service, unless the request names one.
  if (profile.callbackUrl !== null && form.From !== undefined) {
    form.StatusCallback = profile.callbackUrl;
  }
  return {
    target: "Messages.json",
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

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  var body = response.body;
  if (status >= 200 && status < 300) {
    if (isObject(body) && typeof body.sid === "string" && body.sid !== "") {
      return {outcome: "accepted", providerReference: body.sid};
    }
    // Taken, but without a sid no status callback can be matched to the message.
    return {outcome: "accepted"};
  }
  var twilioCode = isObject(body) && (typeof body.code === "number" || typeof body.code === "string") ? String(body.code) : "";
  var code = twilioCode !== "" ? "twilio." + twilioCode : "twilio.http-" + status;
  if (lookup(TRANSIENT_CODES, twilioCode) || status === 408 || status === 429 || status === 503) {
    // Without retryAfter the runtime honours the Retry-After header, if Twilio sent one.
    return {outcome: "transient", code: code};
  }
  if (status === 500 || status === 502 || status === 504) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}

// MessageStatus → report. Statuses that are not delivery reports (queued, accepting, sending,
// scheduled, …) are ignored.
var REPORTS = {
  sent: "sent",
  delivered: "delivered",
  read: "delivered",
  undelivered: "undelivered",
  failed: "undelivered",
  canceled: "undelivered"
};

// statusReport reads a status callback (it carries MessageStatus).
function statusReport(form) {
  var report = lookup(REPORTS, form.MessageStatus);
  if (report === undefined) {
    return null;
  }
  var out = {providerReference: form.MessageSid, report: report};
  if (report === "undelivered") {
    // ErrorCode (30003 unreachable, 30005 unknown destination, …) is kept for operators.
    out.code = typeof form.ErrorCode === "string" && /^[0-9]{1,8}$/.test(form.ErrorCode) ?
      "twilio." + form.ErrorCode : "twilio." + form.MessageStatus;
  }
  return out;
}

// inboundMessage reads an incoming SMS (no MessageStatus; From, To and Body).
function inboundMessage(form) {
  if (typeof form.From !== "string" || form.From === "" || typeof form.Body !== "string") {
    throw new Error("an incoming Twilio message carries From and Body");
  }
  return {
    from: form.From,
    to: typeof form.To === "string" ? form.To : "",
    text: form.Body,
    providerReference: form.MessageSid
  };
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.CallbackResult | null}
 */
function callback(request) {
  var form = request.form;
  if (!isObject(form) || typeof form.MessageSid !== "string" || form.MessageSid === "") {
    throw new Error("a Twilio callback is a form with MessageSid");
  }
  if (typeof form.MessageStatus === "string") {
    var report = statusReport(form);
    return report === null ? null : {receipts: [report]};
  }
  return {inbound: [inboundMessage(form)]};
}
