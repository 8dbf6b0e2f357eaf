// @ts-check
// Adapter for ntfy (ntfy.sh or a self-hosted server), carrying the chat channel: publishing a
// push notification to a topic.
//
// Request:  POST <baseUrl> (the server's root, e.g. https://ntfy.sh/), JSON {"topic",
//           "message", "title"?, "tags"?, "priority"?, "click"?, "markdown"?, "actions"?}:
//           topic is the message's recipient, message the text part, title the sender
//           profile's sender; a body part may add title, tags, priority, click, icon, markdown
//           and actions. The runtime adds Authorization: Bearer <access token> (tk_…). ntfy,
//           "Publishing: publish as JSON".
// Answer:   200 {"id", "time", "expires", "event": "message", "topic", "message", …}; an
//           error is {"code": 40301, "http": 403, "error": "forbidden", "link"} with 400
//           (40xxx: an invalid topic, priority, …), 401, 403, 413 (41301 too large), 429
//           (42901 too many requests, 42908 daily quota and others: limits reached) or 507.
//           ntfy, "Publishing" and its server's error codes (server/errors.go).
// Callback: none. ntfy posts no delivery reports.

// Options of the JSON publish form a body part may set.
var OPTIONS = ["title", "tags", "priority", "click", "icon", "markdown", "actions"];

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
  var body = {topic: message.recipient, message: message.parts.text};
  if (profile.sender !== "") {
    body.title = profile.sender;
  }
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
  return {target: "./", headers: {"content-type": "application/json"}, bodyFormat: "json", body: body};
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  var body = response.body;
  if (status >= 200 && status < 300) {
    if (isObject(body) && typeof body.id === "string" && body.id !== "") {
      return {outcome: "accepted", providerReference: body.id};
    }
    return {outcome: "accepted"};
  }
  var ntfyCode = isObject(body) && typeof body.code === "number" && body.code >= 10000 && body.code < 60000 ? String(body.code) : "";
  var code = ntfyCode !== "" ? "ntfy." + ntfyCode : "ntfy.http-" + status;
  if (status === 408 || status === 429 || status === 503 || status === 507) {
    return {outcome: "transient", code: code}; // limits reached, or the server's cache is full
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}
