// @ts-check
// A push adapter written by `switchboard adapter init`: replace the request and answer shapes
// below with your gateway's, then run `switchboard adapter test .`.
//
// Request: POST <baseUrl>send  {"token", "title", "body", "data"?}
// Answer:  200 {"id"}; 404 {"error": "unregistered"} when the device token is no longer valid;
//          429 or 503 with Retry-After when it cannot take it now.
// A push message's recipient is the device token; its parts are title, body and, when there is
// one, data: the JSON text of an object of strings.

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  /** @type {Record<string, unknown>} */
  var body = {token: message.recipient, title: message.parts.title, body: message.parts.body};
  if (typeof message.parts.data === "string") {
    body.data = JSON.parse(message.parts.data);
  }
  return {target: "send", headers: {"content-type": "application/json"}, bodyFormat: "json", body: body};
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var body = response.body;
  if (response.status === 200 && body !== null && typeof body === "object" && typeof body.id === "string") {
    return {outcome: "accepted", providerReference: body.id};
  }
  if (response.status === 404 || response.status === 410) {
    // The token is dead: the application gets a device.unregistered event and can drop it.
    return {outcome: "permanent", code: "push.unregistered", deviceUnregistered: true};
  }
  return null; // the default table: 429 and 503 retry after Retry-After, 5xx may have been sent
}
