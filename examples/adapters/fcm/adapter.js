// @ts-check
// Adapter for Firebase Cloud Messaging's HTTP v1 API, carrying the push channel.
//
// Request:  POST <baseUrl>projects/{project}/messages:send (baseUrl
//           https://fcm.googleapis.com/v1/), JSON {"message": {"token", "notification":
//           {"title", "body"}, "data"?, "android"?}}: token is the message's recipient (the
//           registration token), title and body its parts, data the data part's object of
//           strings; android holds priority, ttl and collapse_key from the runtime's
//           parameters (androidPriority, ttlSeconds, collapseKey) when they are given. The
//           project id is the parameter project. The runtime adds Authorization: Bearer <access
//           token> (google-service-account). FCM reference, "projects.messages.send" and
//           "Message".
// Answer:   200 {"name": "projects/{project}/messages/{id}"}. Errors are the Google API error
//           {"error": {"code", "message", "status", "details": [{"@type":
//           "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode"}]}}, errorCode
//           one of UNREGISTERED (404: the token is no longer valid), INVALID_ARGUMENT (400),
//           SENDER_ID_MISMATCH (403), QUOTA_EXCEEDED (429), UNAVAILABLE (503), INTERNAL (500),
//           THIRD_PARTY_AUTH_ERROR (401: the APNs or web push credential in the Firebase
//           project); a 401 without it is a stale access token. FCM reference, "ErrorCode", and
//           "Best practices when sending": retry 429, 500 and 503 after Retry-After.
// Callback: none. FCM reports no deliveries to the sender.
//
// The provider reference is the message name FCM answers.

// FCM error codes after which the message may be tried again later: nothing was sent.
var TRANSIENT = {QUOTA_EXCEEDED: true, UNAVAILABLE: true, INTERNAL: true};

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// lookup reads table[key] only for the table's own keys (never "constructor", "toString", …).
function lookup(table, key) {
  return typeof key === "string" && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

/**
 * android is the AndroidConfig the runtime's parameters ask for (an empty one is left out),
 * or null.
 * @param {{[name: string]: string}} params
 */
function android(params) {
  /** @type {Record<string, string>} */
  var config = {};
  if (params.androidPriority) {
    if (params.androidPriority !== "normal" && params.androidPriority !== "high") {
      throw new Error("the parameter androidPriority must be normal or high");
    }
    config.priority = params.androidPriority;
  }
  if (params.ttlSeconds) {
    if (!/^[0-9]{1,7}$/.test(params.ttlSeconds) || Number(params.ttlSeconds) > 2419200) {
      throw new Error("the parameter ttlSeconds must be a number of seconds from 0 to 2419200");
    }
    config.ttl = params.ttlSeconds + "s";
  }
  if (params.collapseKey) {
    config.collapse_key = params.collapseKey;
  }
  return Object.keys(config).length > 0 ? config : null;
}

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  var project = profile.parameters.project;
  if (typeof project !== "string" || !/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/.test(project)) {
    throw new Error("the runtime file's parameters must give project, the Firebase project id");
  }
  /** @type {Record<string, unknown>} */
  var m = {
    token: message.recipient,
    notification: {title: message.parts.title, body: message.parts.body}
  };
  if (typeof message.parts.data === "string") {
    m.data = JSON.parse(message.parts.data); // an object of strings, checked when it was made
  }
  var config = android(profile.parameters);
  if (config !== null) {
    m.android = config;
  }
  return {
    target: "projects/" + project + "/messages:send",
    headers: {"content-type": "application/json; charset=utf-8"},
    bodyFormat: "json",
    body: {message: m}
  };
}

/**
 * errorCode is the FcmError's errorCode of a Google API error, else its status, else "".
 * @param {any} error
 * @returns {string}
 */
function errorCode(error) {
  if (!isObject(error)) {
    return "";
  }
  if (Array.isArray(error.details)) {
    for (var i = 0; i < error.details.length; i++) {
      var d = error.details[i];
      if (isObject(d) && d["@type"] === "type.googleapis.com/google.firebase.fcm.v1.FcmError" &&
          typeof d.errorCode === "string") {
        return d.errorCode;
      }
    }
  }
  return typeof error.status === "string" ? error.status : "";
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  var body = response.body;
  if (status >= 200 && status < 300) {
    if (isObject(body) && typeof body.name === "string" && body.name.length <= 256) {
      return {outcome: "accepted", providerReference: body.name};
    }
    return {outcome: "accepted"};
  }
  var fcm = errorCode(isObject(body) ? body.error : null);
  if (!/^[A-Z_]{1,50}$/.test(fcm)) {
    fcm = "";
  }
  // Codes are [A-Za-z0-9._:-]: UNREGISTERED becomes fcm.unregistered.
  var code = fcm !== "" ? "fcm." + fcm.toLowerCase().replace(/_/g, "-") : "fcm.http-" + status;
  if (fcm === "UNREGISTERED") {
    // The app was uninstalled or the token expired: tell the application to drop it.
    return {outcome: "permanent", code: code, deviceUnregistered: true};
  }
  if (lookup(TRANSIENT, fcm) || status === 429 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (status === 401 && fcm !== "THIRD_PARTY_AUTH_ERROR") {
    // The access token was refused: a new one, and the request once more.
    return {outcome: "transient", code: "fcm.unauthenticated", renewCredential: true};
  }
  if (fcm === "" && status >= 500) {
    return null; // the default table: 500, 502, 504 may have been sent
  }
  return {outcome: "permanent", code: code};
}
