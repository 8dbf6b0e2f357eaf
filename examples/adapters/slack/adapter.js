// @ts-check
// Adapter for Slack's Web API chat.postMessage, carrying the chat channel.
//
// Request:  POST <baseUrl>chat.postMessage (baseUrl https://slack.com/api/), JSON {"channel",
//           "text", "blocks"?, "username"?}: channel is the message's recipient (a channel id
//           such as C0123ABCD), text the text part, blocks the "blocks" of the body part when
//           the template has one (text stays as the notification's fallback). The runtime adds
//           Authorization: Bearer <bot token>. Slack API reference, "chat.postMessage".
// Answer:   200 {"ok": true, "channel", "ts", "message": {…}}. Errors come with 200 too:
//           {"ok": false, "error": "channel_not_found" | "not_in_channel" | "is_archived" |
//           "msg_too_long" | "no_text" | "invalid_blocks" | "invalid_auth" | "missing_scope" |
//           …}; rate limiting is 429 with Retry-After and {"ok": false, "error":
//           "ratelimited"}; internal_error and fatal_error say that part of the operation may
//           have succeeded. Same reference, "Errors", and "Rate limits".
// Callback: none. Slack posts no delivery reports; its Events API (messages in channels) first
//           checks the Request URL by a url_verification request whose challenge must be
//           echoed in the answer, which the callback route does not do: no inbound messages.
//
// The provider reference is channel/ts, the message's address in Slack.

// Errors that mean "not now": nothing was posted.
var TRANSIENT_ERRORS = {
  ratelimited: true,
  rate_limited: true,
  service_unavailable: true,
  request_timeout: true, // the POST data arrived missing or truncated
  team_added_to_org: true
};

// Errors after which the message may have been posted.
var MAYBE_ERRORS = {
  internal_error: true,
  fatal_error: true
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
  /** @type {Record<string, unknown>} */
  var body = {channel: message.recipient, text: message.parts.text};
  if (typeof message.parts.body === "string") {
    var doc = JSON.parse(message.parts.body);
    if (isObject(doc) && Array.isArray(doc.blocks)) {
      body.blocks = doc.blocks;
    }
  }
  if (profile.sender !== "") {
    body.username = profile.sender; // shown when the app has chat:write.customize
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
  var status = response.status;
  var body = response.body;
  if (isObject(body) && body.ok === true && status >= 200 && status < 300) {
    if (typeof body.channel === "string" && typeof body.ts === "string" && body.ts !== "") {
      return {outcome: "accepted", providerReference: body.channel + "/" + body.ts};
    }
    return {outcome: "accepted"};
  }
  var error = isObject(body) && typeof body.error === "string" && /^[a-z0-9_]{1,58}$/.test(body.error) ? body.error : "";
  // Codes are [A-Za-z0-9._:-]: Slack's snake_case errors become kebab case.
  var code = error !== "" ? "slack." + error.replace(/_/g, "-") : "slack.http-" + status;
  if (lookup(TRANSIENT_ERRORS, error) || status === 408 || status === 429 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (lookup(MAYBE_ERRORS, error) || status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}
