// @ts-check
// Adapter for the Telegram Bot API's sendMessage, carrying the chat channel.
//
// Request:  POST https://api.telegram.org/bot<token>/sendMessage, JSON {"chat_id", "text",
//           "parse_mode"?, "reply_markup"?, …}: chat_id is the message's recipient (a chat id
//           such as 123456789 or -1001234567890, or @channelusername), text the text part; a
//           body part may add sendMessage's formatting options (below). The bot token is part of
//           the URL: the runtime's path-token authentication writes bot<token> after the
//           baseUrl, so the adapter's target is just sendMessage. Telegram Bot API, "Making
//           requests" and "sendMessage".
// Answer:   200 {"ok": true, "result": {"message_id", "chat": {"id", …}, "date", "text"}}; an
//           error is {"ok": false, "error_code": 400 | 401 | 403 | 429 | …, "description": "Bad
//           Request: chat not found", "parameters"?: {"retry_after": 35} | {"migrate_to_chat_id":
//           -100…}}. Telegram Bot API, "Making requests" and "ResponseParameters".
// Callback: none. Telegram posts no delivery reports. (Updates, incoming messages included, can
//           be posted to a webhook; reading them would make the provider take callbacks, which
//           also marks every send as awaiting a report: not done here.)
//
// The provider reference is chat_id/message_id, the message's address in Telegram.

// Options of sendMessage a body part may set; anything else in it is left out.
var OPTIONS = ["parse_mode", "entities", "link_preview_options", "disable_notification",
  "protect_content", "message_thread_id", "reply_markup"];

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  /** @type {Record<string, unknown>} */
  var body = {chat_id: message.recipient, text: message.parts.text};
  if (typeof message.parts.body === "string") {
    var doc = JSON.parse(message.parts.body);
    if (isObject(doc)) {
      for (var i = 0; i < OPTIONS.length; i++) {
        if (Object.prototype.hasOwnProperty.call(doc, OPTIONS[i])) {
          body[OPTIONS[i]] = doc[OPTIONS[i]];
        }
      }
    }
  }
  return {target: "sendMessage", headers: {"content-type": "application/json"}, bodyFormat: "json", body: body};
}

// codeOf turns a description ("Forbidden: bot was blocked by the user") into a code.
function codeOf(description, status) {
  if (typeof description !== "string") {
    return "telegram.http-" + status;
  }
  var text = description.substring(description.indexOf(":") + 1).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  return text !== "" ? "telegram." + text.substring(0, 55).replace(/-+$/, "") : "telegram.http-" + status;
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  var body = response.body;
  if (status >= 200 && status < 300 && isObject(body) && body.ok === true) {
    var r = isObject(body.result) ? body.result : {};
    var chat = isObject(r.chat) ? r.chat.id : undefined;
    if ((typeof chat === "number" || typeof chat === "string") && typeof r.message_id === "number") {
      return {outcome: "accepted", providerReference: String(chat) + "/" + String(r.message_id)};
    }
    return {outcome: "accepted"};
  }
  var params = isObject(body) && isObject(body.parameters) ? body.parameters : {};
  if (params.migrate_to_chat_id !== undefined) {
    // The group became a supergroup with another id: the recipient must change.
    return {outcome: "permanent", code: "telegram.chat-migrated"};
  }
  var code = codeOf(isObject(body) ? body.description : undefined, status);
  if (status === 429 || typeof params.retry_after === "number") {
    /** @type {Switchboard.Interpretation} */
    var out = {outcome: "transient", code: "telegram.too-many-requests"};
    if (typeof params.retry_after === "number" && params.retry_after > 0 && params.retry_after < 86400) {
      out.retryAfter = params.retry_after;
    }
    return out;
  }
  if (status === 408 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}
