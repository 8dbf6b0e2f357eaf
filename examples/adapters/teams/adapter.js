// @ts-check
// Adapter for a Microsoft Teams incoming webhook (a Microsoft 365 connector), carrying the chat
// channel.
//
// Request:  POST <the webhook URL>, JSON {"type": "message", "attachments": [{"contentType":
//           "application/vnd.microsoft.card.adaptive", "content": {"type": "AdaptiveCard",
//           "version": "1.4", "body": [{"type": "TextBlock", "text", "wrap": true}]}}]}: an
//           Adaptive Card with the text part, or the body part's card (an AdaptiveCard, or a
//           whole {"type": "message", "attachments"} document). The webhook URL is the
//           credential: its last segment is the runtime's path-token authentication and the rest
//           the baseUrl, so the target is "./". Microsoft Teams, "Create an Incoming Webhook" and
//           "Send Adaptive Cards using an Incoming Webhook".
// Answer:   200 with the text 1. A failure may come as 400 with a text ("Text is required",
//           "Summary or Text is required.") or 413, or as 200 with a text that names the
//           status: "Webhook message delivery failed with error: Microsoft Teams endpoint
//           returned HTTP error 429 with ContextId …". Microsoft Teams, "Rate limiting for
//           connectors".
// Callback: none. Teams returns no message id and posts no delivery reports.
//
// A webhook posts to one channel. The runtime's parameters name it (channel); a message whose
// recipient is another channel is refused rather than posted to the wrong one: declare one
// provider per webhook.

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// card is the Adaptive Card message for the text, or the body part's card.
function card(message) {
  if (typeof message.parts.body === "string") {
    var doc = JSON.parse(message.parts.body);
    if (isObject(doc) && doc.type === "message" && Array.isArray(doc.attachments)) {
      return doc;
    }
    if (isObject(doc) && doc.type === "AdaptiveCard") {
      return {type: "message", attachments: [{contentType: "application/vnd.microsoft.card.adaptive", content: doc}]};
    }
  }
  return {
    type: "message",
    attachments: [{
      contentType: "application/vnd.microsoft.card.adaptive",
      content: {
        $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
        type: "AdaptiveCard",
        version: "1.4",
        body: [{type: "TextBlock", text: message.parts.text, wrap: true}]
      }
    }]
  };
}

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  var channel = profile.parameters.channel;
  if (typeof channel !== "string" || channel === "") {
    throw new Error("the runtime file's parameters must give channel, the channel this webhook posts to");
  }
  if (message.recipient !== channel) {
    throw new Error("this webhook posts to " + channel + ", not to the message's recipient: declare a provider per webhook");
  }
  return {target: "./", headers: {"content-type": "application/json"}, bodyFormat: "json", body: card(message)};
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  var text = typeof response.body === "string" ? response.body : "";
  // A connector's failure inside a 200 names the status of Teams' endpoint.
  var named = /returned HTTP error ([0-9]{3})/.exec(text);
  if (status >= 200 && status < 300 && named === null) {
    return {outcome: "accepted"}; // no id: Teams returns none
  }
  if (named !== null) {
    status = Number(named[1]);
  }
  var code = "teams.http-" + status;
  if (status === 408 || status === 429 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (status >= 500) {
    // A 5xx inside a 200 says delivery failed (not posted); a 5xx answer itself may have posted.
    return {outcome: named !== null ? "transient" : "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}
