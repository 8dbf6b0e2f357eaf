// @ts-check
// Adapter for Amazon SES API v2 (SendEmail), carrying the email channel.
//
// Request:  POST <baseUrl>v2/email/outbound-emails (baseUrl https://email.{region}.amazonaws.com/),
//           JSON {"FromEmailAddress", "Destination": {"ToAddresses": ["…"]}, "Content":
//           {"Simple": {"Subject": {"Data", "Charset"}, "Body": {"Text": {…}, "Html"?: {…}}}},
//           "ConfigurationSetName"?, "EmailTags": [{"Name", "Value"}]}. The runtime signs it with
//           AWS Signature Version 4 (service ses). Amazon SES API v2 reference, "SendEmail".
// Answer:   200 {"MessageId": "0100018…-…-000000"}; an error names its type in the
//           X-Amzn-ErrorType header ("MessageRejected:http://internal.amazon.com/…") and the
//           body {"message": "…"}: AccountSuspendedException, BadRequestException,
//           LimitExceededException, MailFromDomainNotVerifiedException, MessageRejected,
//           NotFoundException, SendingPausedException (400 or 404) and TooManyRequestsException
//           (429). Same reference, "Errors".
// Callback: none. Delivery, bounce and complaint events go to a configuration set's event
//           destinations (SNS, EventBridge, Firehose, …); reading SNS notifications would need a
//           verifier of SNS's certificate-based signatures, which Switchboard does not have.

// Error types that mean "not now": the message itself is fine, the account is paused or over
// its sending quota.
var TRANSIENT_TYPES = {
  TooManyRequestsException: true,
  LimitExceededException: true,
  SendingPausedException: true,
  AccountSuspendedException: true
};

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// lookup reads table[key] only for the table's own keys (never "constructor", "toString", …).
function lookup(table, key) {
  return typeof key === "string" && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

// errorType is the error's type from X-Amzn-ErrorType (up to the first ":"), or the body's
// __type, or "".
function errorType(response) {
  var t = response.headers["x-amzn-errortype"];
  if (typeof t !== "string" || t === "") {
    t = isObject(response.body) && typeof response.body.__type === "string" ? response.body.__type : "";
  }
  t = t.split(":")[0];
  t = t.substring(t.lastIndexOf("#") + 1);
  return /^[A-Za-z]{1,60}$/.test(t) ? t : "";
}

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  /** @type {Record<string, unknown>} */
  var bodyParts = {Text: {Data: message.parts.text, Charset: "UTF-8"}};
  if (typeof message.parts.html === "string" && message.parts.html !== "") {
    bodyParts.Html = {Data: message.parts.html, Charset: "UTF-8"};
  }
  /** @type {Record<string, unknown>} */
  var body = {
    FromEmailAddress: profile.sender,
    Destination: {ToAddresses: [message.recipient]},
    Content: {Simple: {Subject: {Data: message.parts.subject, Charset: "UTF-8"}, Body: bodyParts}},
    // In every event an event destination receives: lets operators find the message.
    EmailTags: [{Name: "switchboard-message-id", Value: message.messageId}]
  };
  var set = profile.parameters.configurationSet;
  if (typeof set === "string" && set !== "") {
    body.ConfigurationSetName = set;
  }
  return {target: "v2/email/outbound-emails", headers: {"content-type": "application/json"}, bodyFormat: "json", body: body};
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  if (status >= 200 && status < 300) {
    var body = response.body;
    if (isObject(body) && typeof body.MessageId === "string" && body.MessageId !== "") {
      return {outcome: "accepted", providerReference: body.MessageId};
    }
    return {outcome: "accepted"};
  }
  var type = errorType(response);
  var code = "ses." + (type !== "" ? type : "http-" + status);
  if (lookup(TRANSIENT_TYPES, type) || status === 408 || status === 429 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}
