// @ts-check
// Adapter for the Apple Push Notification service's HTTP/2 provider API, carrying the push
// channel.
//
// Request:  POST <baseUrl>3/device/{token} (baseUrl https://api.push.apple.com/, HTTP/2 only),
//           the token being the message's recipient, with the headers apns-id (the message id,
//           a UUID), apns-topic (the bundle id, parameter topic), apns-push-type (alert or
//           background), apns-priority, apns-expiration and apns-collapse-id from the runtime's
//           parameters, and the JSON payload {"aps": {"alert": {"title", "body"}}} (background:
//           {"aps": {"content-available": 1}}) with the data part's members beside aps. The
//           runtime adds authorization: bearer <provider token> (apns-token). Apple, "Sending
//           notification requests to APNs".
// Answer:   200 with the apns-id header and no body. Errors: {"reason": "…"} with 400
//           (BadDeviceToken, BadTopic, BadPriority, BadExpirationDate, BadCollapseId,
//           DeviceTokenNotForTopic, MissingTopic, PayloadEmpty, …), 403
//           (ExpiredProviderToken: the token is over an hour old; InvalidProviderToken,
//           MissingProviderToken, TopicDisallowed), 404 BadPath, 405, 410 Unregistered (the
//           token is no longer active for the topic; with a timestamp), 413 PayloadTooLarge,
//           429 (TooManyRequests, TooManyProviderTokenUpdates), 500 InternalServerError, 503
//           (ServiceUnavailable, Shutdown). Apple, "Handling notification responses from APNs".
// Callback: none. APNs reports no deliveries to the sender.
//
// The provider reference is the apns-id APNs answers: the message id prepare sent.

// Reasons after which the notification may be sent again later: APNs did not take it.
var TRANSIENT_STATUS = {429: true, 500: true, 503: true};

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * headers are the APNs headers of the runtime's parameters; an empty parameter is left out.
 * @param {Switchboard.Message} message
 * @param {{[name: string]: string}} params
 * @returns {{[name: string]: string}}
 */
function apnsHeaders(message, params) {
  if (!params.topic) {
    throw new Error("the runtime file's parameters must give topic, the app's bundle id");
  }
  var pushType = params.pushType || "alert";
  if (pushType !== "alert" && pushType !== "background") {
    throw new Error("the parameter pushType must be alert or background");
  }
  var priority = params.priority || (pushType === "background" ? "5" : "10");
  if (priority !== "10" && priority !== "5" && priority !== "1") {
    throw new Error("the parameter priority must be 10, 5 or 1");
  }
  /** @type {{[name: string]: string}} */
  var h = {
    "content-type": "application/json",
    "apns-id": message.messageId,
    "apns-topic": params.topic,
    "apns-push-type": pushType,
    "apns-priority": priority
  };
  if (params.expiration) {
    if (!/^[0-9]{1,10}$/.test(params.expiration)) {
      throw new Error("the parameter expiration must be a UNIX time in seconds, or 0");
    }
    h["apns-expiration"] = params.expiration;
  }
  if (params.collapseId) {
    h["apns-collapse-id"] = params.collapseId;
  }
  return h;
}

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  var headers = apnsHeaders(message, profile.parameters);
  /** @type {Record<string, unknown>} */
  var payload = {};
  if (typeof message.parts.data === "string") {
    var data = JSON.parse(message.parts.data); // an object of strings, checked when it was made
    for (var key in data) {
      if (Object.prototype.hasOwnProperty.call(data, key) && key !== "aps") {
        payload[key] = data[key];
      }
    }
  }
  payload.aps = headers["apns-push-type"] === "background" ?
    {"content-available": 1} :
    {alert: {title: message.parts.title, body: message.parts.body}};
  return {
    target: "3/device/" + encodeURIComponent(message.recipient),
    headers: headers,
    bodyFormat: "json",
    body: payload
  };
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  if (status === 200) {
    var id = response.headers["apns-id"];
    if (typeof id === "string" && /^[0-9A-Fa-f-]{36}$/.test(id)) {
      return {outcome: "accepted", providerReference: id.toLowerCase()};
    }
    return {outcome: "accepted"};
  }
  var body = response.body;
  var reason = isObject(body) && typeof body.reason === "string" && /^[A-Za-z]{1,50}$/.test(body.reason) ? body.reason : "";
  // Codes are [A-Za-z0-9._:-]: BadDeviceToken becomes apns.bad-device-token.
  var code = reason !== "" ? "apns." + reason.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase() : "apns.http-" + status;
  if (status === 410) {
    // The token is no longer active for the topic: tell the application to drop it.
    return {outcome: "permanent", code: code, deviceUnregistered: true};
  }
  if (status === 403 && reason === "ExpiredProviderToken") {
    // The provider token is stale: a new one, and the request once more.
    return {outcome: "transient", code: code, renewCredential: true};
  }
  if (Object.prototype.hasOwnProperty.call(TRANSIENT_STATUS, String(status))) {
    return {outcome: "transient", code: code};
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}
