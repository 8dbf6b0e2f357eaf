// @ts-check
// An SMS adapter written by `switchboard adapter init`: replace the request, answer and
// callback shapes below with your gateway's, then run `switchboard adapter test .`.
//
// Request:  POST <baseUrl>messages  {"to", "from", "text", "reference"}
// Answer:   2xx {"id": "<gateway message id>"}; 429 and 503 with Retry-After when busy
// Callback: {"id": "<gateway message id>", "status": "sent" | "delivered" | "undelivered"}

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  return {
    target: "messages",
    headers: {"content-type": "application/json"},
    bodyFormat: "json",
    body: {
      to: message.recipient,
      from: profile.sender,
      text: message.parts.text,
      reference: message.messageId
    }
  };
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
  return null; // the default table: 2xx accepted, 408/429/503 transient, 500/502/504 maybe-sent
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.Receipt | null}
 */
function receipt(request) {
  var body = request.json;
  if (body === null || typeof body !== "object" || typeof body.id !== "string" || body.id === "") {
    return null; // not a delivery report: answered 204 and ignored
  }
  if (body.status !== "sent" && body.status !== "delivered" && body.status !== "undelivered") {
    return null; // a status that is not a report (for example "queued")
  }
  return {providerReference: body.id, report: body.status};
}
