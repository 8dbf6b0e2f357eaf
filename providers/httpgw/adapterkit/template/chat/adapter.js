// @ts-check
// A chat adapter written by `switchboard adapter init`: replace the request and answer shapes
// below with your gateway's, then run `switchboard adapter test .`.
//
// Request: POST <baseUrl>chat.postMessage  {"channel", "text", "blocks"?}
// Answer:  200 {"ok": true, "channel", "ts"} or 200 {"ok": false, "error": "channel_not_found"}
// A chat message's recipient is the gateway's own address (a channel id); its parts are text
// and, when the template has one, body: a JSON document sent as it is (here, Slack blocks).

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  /** @type {Record<string, unknown>} */
  var body = {channel: message.recipient, text: message.parts.text};
  if (typeof message.parts.body === "string") {
    body.blocks = JSON.parse(message.parts.body).blocks;
  }
  if (profile.sender) {
    body.username = profile.sender;
  }
  return {target: "chat.postMessage", headers: {"content-type": "application/json"}, bodyFormat: "json", body: body};
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var body = response.body;
  if (response.status !== 200 || body === null || typeof body !== "object") {
    return null;
  }
  if (body.ok === true && typeof body.ts === "string") {
    return {outcome: "accepted", providerReference: String(body.channel) + "/" + body.ts};
  }
  var error = typeof body.error === "string" ? body.error : "unknown";
  // Codes are [A-Za-z0-9._:-]: snake_case errors become kebab case.
  return {outcome: "permanent", code: "chat." + error.replace(/[^A-Za-z0-9.:-]/g, "-").slice(0, 59)};
}
