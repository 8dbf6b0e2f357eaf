// @ts-check
// Adapter for SendGrid Mail Send v3, carrying the email channel, with the signed Event Webhook.
//
// Request:  POST <baseUrl>mail/send (baseUrl https://api.sendgrid.com/v3/), JSON
//           {"personalizations": [{"to": [{"email"}]}], "from": {"email"}, "subject",
//            "content": [{"type": "text/plain", …}, {"type": "text/html", …}], "custom_args"};
//           the runtime adds Authorization: Bearer <API key>.
// Answer:   202 Accepted, empty body, X-Message-Id: the message's SendGrid id. An error is
//           {"errors": [{"message": "…", "field": "…", "help": null}]}; 429 when over the rate.
// Callback: the Event Webhook, a JSON array of events signed with ECDSA P-256 (the runtime's
//           ecdsa-p256 verifier checks it before receipt runs). Each event carries sg_message_id:
//           the X-Message-Id followed by the SendGrid filter that handled it
//           ("W86EgYT6SQKk0lRflfLRsA.filterdrecv-…-14.0"), and the custom_args of the request.
//
// The provider reference is X-Message-Id; receipt cuts sg_message_id back to it (before
// ".filter", or before the first "." for ids without that marker), so that both sides match.

// Event → report. Open and click prove the mail arrived; deferred (still retrying), spam
// reports and unsubscribes are not delivery reports.
var REPORTS = {
  processed: "sent",
  delivered: "delivered",
  open: "delivered",
  click: "delivered",
  bounce: "undelivered",
  dropped: "undelivered"
};

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  var content = [{type: "text/plain", value: message.parts.text}];
  if (typeof message.parts.html === "string" && message.parts.html !== "") {
    content.push({type: "text/html", value: message.parts.html});
  }
  return {
    target: "mail/send",
    headers: {"content-type": "application/json"},
    bodyFormat: "json",
    body: {
      personalizations: [{to: [{email: message.recipient}]}],
      from: {email: profile.sender},
      subject: message.parts.subject,
      content: content,
      // Echoed in every event; lets operators find the message in SendGrid's activity feed.
      custom_args: {switchboard_id: message.messageId}
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

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  if (status >= 200 && status < 300) {
    var id = response.headers["x-message-id"];
    if (typeof id === "string" && id !== "") {
      return {outcome: "accepted", providerReference: id};
    }
    return {outcome: "accepted"}; // taken, but no event can be matched to it
  }
  var code = "sendgrid.http-" + status;
  if (status === 408 || status === 429 || status === 503) {
    // SendGrid's 429 says when the window resets (X-RateLimit-Reset, a Unix time), which a
    // script cannot turn into a delay without a clock: the profile's backoff applies.
    return {outcome: "transient", code: code};
  }
  if (status === 500 || status === 502 || status === 504) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}

// reference cuts an sg_message_id back to the X-Message-Id of the send.
function reference(sgMessageId) {
  var at = sgMessageId.indexOf(".filter");
  if (at < 0) {
    at = sgMessageId.indexOf(".");
  }
  return at > 0 ? sgMessageId.substring(0, at) : sgMessageId;
}

function oneEvent(e) {
  if (!isObject(e)) {
    return null;
  }
  var report = lookup(REPORTS, e.event);
  if (report === undefined || typeof e.sg_message_id !== "string" || e.sg_message_id === "") {
    return null;
  }
  var out = {providerReference: reference(e.sg_message_id), report: report};
  if (report === "undelivered") {
    // bounce (type bounce or blocked) with its SMTP status, or dropped.
    var kind = e.event === "bounce" && (e.type === "blocked" || e.type === "bounce") ? e.type : e.event;
    out.code = "sendgrid." + kind;
    if (typeof e.status === "string" && /^[245]\.[0-9]{1,3}\.[0-9]{1,3}$/.test(e.status)) {
      out.code += "." + e.status;
    }
  }
  return out;
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.Receipt | Switchboard.Receipt[] | null}
 */
function receipt(request) {
  var events = request.json;
  if (!Array.isArray(events)) {
    throw new Error("the SendGrid Event Webhook posts a JSON array of events");
  }
  var out = [];
  for (var i = 0; i < events.length; i++) {
    var one = oneEvent(events[i]);
    if (one !== null) {
      out.push(one);
    }
  }
  return out.length > 0 ? out : null;
}
