// @ts-check
// Adapter for AWS End User Messaging SMS (the PinpointSMSVoiceV2 API's SendTextMessage).
//
// Request:  POST <baseUrl> (https://sms-voice.{region}.amazonaws.com/), AWS JSON 1.0:
//           Content-Type: application/x-amz-json-1.0, X-Amz-Target:
//           PinpointSMSVoiceV2.SendTextMessage, body {"DestinationPhoneNumber",
//           "OriginationIdentity", "MessageBody", "MessageType": "TRANSACTIONAL",
//           "ConfigurationSetName"?, "Context"}. The runtime signs it with AWS Signature Version 4
//           (service sms-voice). AWS End User Messaging SMS API reference, "SendTextMessage".
// Answer:   200 {"MessageId": "…"}; an error is {"__type": "…#ThrottlingException", "message":
//           "…", "Reason"?: "…"}: AccessDeniedException, ConflictException (Reason such as
//           DESTINATION_PHONE_NUMBER_OPTED_OUT), InternalServerException, ResourceNotFoundException
//           (an origination identity that does not exist), ServiceQuotaExceededException (Reason
//           such as MONTHLY_SPEND_LIMIT_REACHED_FOR_TEXT), ThrottlingException and
//           ValidationException (Reason such as INVALID_PARAMETER). Same reference, "Errors".
// Callback: none. Delivery events go to a configuration set's event destinations (SNS, Amazon
//           Data Firehose, CloudWatch); reading SNS notifications would need a verifier of SNS's
//           certificate-based signatures, which Switchboard does not have, so receipts: none.

// Error types that mean "not now": the message itself is fine.
var TRANSIENT_TYPES = {
  ThrottlingException: true,
  ServiceQuotaExceededException: true // the account's spend limit or rate quota, not this message
};

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// lookup reads table[key] only for the table's own keys (never "constructor", "toString", …).
function lookup(table, key) {
  return typeof key === "string" && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

// errorType is the short name of an AWS JSON error's __type ("…#ThrottlingException"), or "".
function errorType(body) {
  var t = isObject(body) && typeof body.__type === "string" ? body.__type : "";
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
  var body = {
    DestinationPhoneNumber: message.recipient,
    OriginationIdentity: profile.sender, // a phone number, sender id or pool (id or ARN)
    MessageBody: message.parts.text,
    MessageType: "TRANSACTIONAL",
    Context: {switchboardMessageId: message.messageId} // logged to the event destinations
  };
  var set = profile.parameters.configurationSet;
  if (typeof set === "string" && set !== "") {
    body.ConfigurationSetName = set;
  }
  return {
    target: "./",
    headers: {"content-type": "application/x-amz-json-1.0", "x-amz-target": "PinpointSMSVoiceV2.SendTextMessage"},
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
  if (status >= 200 && status < 300) {
    if (isObject(body) && typeof body.MessageId === "string" && body.MessageId !== "") {
      return {outcome: "accepted", providerReference: body.MessageId};
    }
    return {outcome: "accepted"};
  }
  var type = errorType(body);
  var reason = isObject(body) && typeof body.Reason === "string" && /^[A-Z0-9_]{1,50}$/.test(body.Reason) ? body.Reason : "";
  var code = "aws-sms." + (reason !== "" ? reason.replace(/_/g, "-") : type !== "" ? type : "http-" + status);
  if (lookup(TRANSIENT_TYPES, type) || status === 408 || status === 429 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code}; // InternalServerException: it may have gone
  }
  return {outcome: "permanent", code: code};
}
