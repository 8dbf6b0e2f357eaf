// @ts-check
// Adapter for the quickstart chat gateway (the Slack-like mock of `switchboard dev`).
//
// Request: POST <baseUrl>chat.postMessage  {"channel", "text", "blocks"?, "username"?}
// Answer:  200 {"ok": true, "channel": "C…", "ts": "1700000000.000100"}
//          200 {"ok": false, "error": "channel_not_found"}   (Slack answers errors with 200)
//          429 with Retry-After when rate limited

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  /** @type {Record<string, unknown>} */
  var body = {channel: message.recipient, text: message.parts.text};
  if (typeof message.parts.body === "string") {
    // The template's body part is a JSON document (validated when it was rendered).
    var doc = JSON.parse(message.parts.body);
    if (doc !== null && typeof doc === "object" && Array.isArray(doc.blocks)) {
      body.blocks = doc.blocks;
    }
  }
  if (profile.sender) {
    body.username = profile.sender;
  }
  return {
    target: "chat.postMessage",
    headers: {"content-type": "application/json; charset=utf-8"},
    bodyFormat: "json",
    body: body
  };
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  if (response.status !== 200) {
    return null; // the default table: 429 and 503 transient (Retry-After honoured), …
  }
  var body = response.body;
  if (body === null || typeof body !== "object") {
    return {outcome: "maybe-sent", code: "chat.unreadable-answer"};
  }
  if (body.ok === true && typeof body.ts === "string") {
    return {outcome: "accepted", providerReference: String(body.channel) + "/" + body.ts};
  }
  var error = typeof body.error === "string" ? body.error : "unknown";
  if (error === "ratelimited" || error === "service_unavailable") {
    return {outcome: "transient", code: "chat." + error.replace(/[^A-Za-z0-9.:-]/g, "-")};
  }
  // Codes are [A-Za-z0-9._:-]: Slack's snake_case errors become kebab case.
  return {outcome: "permanent", code: "chat." + error.replace(/[^A-Za-z0-9.:-]/g, "-").slice(0, 59)};
}
