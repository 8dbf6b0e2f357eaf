// @ts-check
// Adapter for Plivo SMS (the Message API), with status callbacks and incoming SMS.
//
// Request:  POST <baseUrl>Account/{auth_id}/Message/ (baseUrl https://api.plivo.com/v1/), JSON
//           {"src", "dst", "text", "url", "method": "POST"}: url is where Plivo posts the status
//           callbacks of this message (profile.callbackUrl). The auth id comes from the
//           runtime's parameters (authId) and the runtime adds basic authentication (auth id,
//           auth token). Plivo API reference, "Send a message".
// Answer:   202 {"api_id", "message": "message(s) queued", "message_uuid": ["…"]}; an error is
//           {"api_id", "error": "…"} with 400 (a parameter is missing or invalid), 401
//           (authentication failed), 404, 429 (rate limited) or 500. Plivo API reference,
//           "API responses".
// Callback: form POST to url {MessageUUID, Status: queued | sent | delivered | undelivered |
//           failed | rejected, ErrorCode (for failed and undelivered), Sequence, …}, signed with
//           X-Plivo-Signature-V3 and its nonce (the runtime's plivo-v3 verifier checks it).
//           Plivo documents a callback per status change; retries and a late "sent" after
//           "delivered" happen, and the store keeps only the forward moves. Plivo, "Message
//           status callbacks".
// Inbound:  an SMS to a Plivo number whose application's message_url is the same URL: form POST
//           {From, To, Text, Type: sms, MessageUUID, Units, …} without Status, signed the same
//           way. Plivo, "Handling incoming SMS/MMS". A retry carries the same MessageUUID.

// Status → report. queued is not a delivery report.
var REPORTS = {
  sent: "sent",
  delivered: "delivered",
  undelivered: "undelivered",
  failed: "undelivered",
  rejected: "undelivered"
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
  var authId = profile.parameters.authId;
  if (typeof authId !== "string" || !/^[A-Za-z0-9]{1,64}$/.test(authId)) {
    throw new Error("the runtime file's parameters must give authId, the Plivo auth id (letters and digits)");
  }
  /** @type {Record<string, unknown>} */
  var body = {src: profile.sender, dst: message.recipient, text: message.parts.text};
  if (profile.callbackUrl !== null) {
    body.url = profile.callbackUrl; // status callbacks for this message
    body.method = "POST";
  }
  return {
    target: "Account/" + authId + "/Message/",
    headers: {"content-type": "application/json"},
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
  if (status >= 200 && status < 300) {
    var uuids = isObject(body) ? body.message_uuid : null;
    if (Array.isArray(uuids) && typeof uuids[0] === "string" && uuids[0] !== "") {
      return {outcome: "accepted", providerReference: uuids[0]};
    }
    return {outcome: "accepted"}; // taken, but no callback can be matched to it
  }
  var code = "plivo.http-" + status;
  if (status === 408 || status === 429 || status === 503) {
    return {outcome: "transient", code: code}; // Retry-After, when sent, is honoured
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}

// statusReport reads a status callback (it carries Status).
function statusReport(form) {
  var report = lookup(REPORTS, form.Status);
  if (report === undefined) {
    return null;
  }
  var out = {providerReference: form.MessageUUID, report: report};
  if (report === "undelivered") {
    out.code = typeof form.ErrorCode === "string" && /^[0-9]{1,8}$/.test(form.ErrorCode) ?
      "plivo." + form.ErrorCode : "plivo." + form.Status;
  }
  return out;
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.CallbackResult | null}
 */
function callback(request) {
  var form = request.form;
  if (!isObject(form) || typeof form.MessageUUID !== "string" || form.MessageUUID === "") {
    throw new Error("a Plivo callback is a form with MessageUUID");
  }
  if (typeof form.Status === "string") {
    var report = statusReport(form);
    return report === null ? null : {receipts: [report]};
  }
  if (typeof form.From !== "string" || form.From === "" || typeof form.Text !== "string") {
    throw new Error("an incoming Plivo message carries From and Text");
  }
  return {inbound: [{
    from: form.From,
    to: typeof form.To === "string" ? form.To : "",
    text: form.Text,
    providerReference: form.MessageUUID
  }]};
}
