// @ts-check
// An email adapter written by `switchboard adapter init`: replace the request, answer and
// callback shapes below with your gateway's, then run `switchboard adapter test .`.
//
// Request:  POST <baseUrl>mail  {"to", "from", "subject", "text", "html"?, "reference"}
// Answer:   2xx {"id": "<gateway message id>"}
// Callback: [{"id": "<gateway message id>", "event": "delivered" | "bounced" | "deferred"}]

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  /** @type {Record<string, string>} */
  var body = {
    to: message.recipient,
    from: profile.sender,
    subject: message.parts.subject || "",
    text: message.parts.text || "",
    reference: message.messageId
  };
  if (typeof message.parts.html === "string") {
    body.html = message.parts.html;
  }
  return {target: "mail", headers: {"content-type": "application/json"}, bodyFormat: "json", body: body};
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var body = response.body;
  if (response.status >= 200 && response.status < 300 && body !== null && typeof body === "object" &&
      typeof body.id === "string" && body.id !== "") {
    return {outcome: "accepted", providerReference: body.id};
  }
  return null;
}

/** @type {Record<string, Switchboard.Report>} */
var reports = {delivered: "delivered", bounced: "undelivered", dropped: "undelivered", processed: "sent"};

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.Receipt[] | null}
 */
function receipt(request) {
  var events = request.json;
  if (!Array.isArray(events)) {
    return null;
  }
  /** @type {Switchboard.Receipt[]} */
  var out = [];
  for (var i = 0; i < events.length; i++) {
    var e = events[i];
    if (e === null || typeof e !== "object" || typeof e.id !== "string" || typeof e.event !== "string") {
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(reports, e.event)) {
      out.push({providerReference: e.id, report: reports[e.event]});
    }
  }
  return out.length > 0 ? out : null;
}
