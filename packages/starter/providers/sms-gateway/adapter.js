// @ts-check
// Adapter for the quickstart SMS gateway (the JSON mock of `switchboard dev`).
//
// Request:  POST <baseUrl>messages  {"to", "from", "text", "reference"}
// Answer:   2xx {"id": "<gateway message id>"}
// Callback: {"id": "<gateway message id>", "status": "sent" | "delivered" | "undelivered"}
//           (or an array of them), signed by the runtime's callbackVerifier; or an inbound
//           message {"type": "inbound", "id": "<gateway id>", "from", "to", "text",
//           "receivedAt"?} on the same route (the mock's POST /inbound posts one).

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  return {
    target: "messages",
    headers: {
      "content-type": "application/json",
      "x-request-id": message.messageId
    },
    bodyFormat: "json",
    body: {
      to: message.recipient,
      from: profile.sender,
      text: message.parts.text,
      reference: message.messageId
    }
  };
}

function retryAfterSeconds(headers) {
  var value = headers && headers["retry-after"];
  if (typeof value === "string" && /^[0-9]{1,6}$/.test(value)) {
    return parseInt(value, 10);
  }
  return undefined;
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  if (status >= 200 && status < 300) {
    var body = response.body;
    if (body !== null && typeof body === "object" && typeof body.id === "string" && body.id !== "") {
      return {outcome: "accepted", providerReference: body.id};
    }
    // Accepted, but without an id no delivery report can be matched to the message.
    return {outcome: "accepted"};
  }
  if (status === 408 || status === 429 || status === 503) {
    /** @type {Switchboard.Interpretation} */
    var result = {outcome: "transient"};
    var after = retryAfterSeconds(response.headers);
    if (after !== undefined) {
      result.retryAfter = after;
    }
    return result;
  }
  if (status === 500 || status === 502 || status === 504) {
    return {outcome: "maybe-sent"};
  }
  return {outcome: "permanent", code: "gateway.http-" + status};
}

function oneReceipt(r) {
  if (r === null || typeof r !== "object" || typeof r.id !== "string" || r.id === "") {
    throw new Error("callback entry without an id");
  }
  if (r.status !== "sent" && r.status !== "delivered" && r.status !== "undelivered") {
    return null; // a status that is not a delivery report (for example "queued")
  }
  return {providerReference: r.id, report: r.status};
}

function receipts(body) {
  if (Object.prototype.toString.call(body) === "[object Array]") {
    var out = [];
    for (var i = 0; i < body.length; i++) {
      var one = oneReceipt(body[i]);
      if (one !== null) {
        out.push(one);
      }
    }
    return out;
  }
  var single = oneReceipt(body);
  return single === null ? [] : [single];
}

function inbound(m) {
  if (typeof m.id !== "string" || typeof m.from !== "string" || typeof m.text !== "string") {
    throw new Error("an inbound message carries id, from and text");
  }
  var item = {providerReference: m.id, from: m.from, to: typeof m.to === "string" ? m.to : "", text: m.text};
  if (typeof m.receivedAt === "string") {
    item.receivedAt = m.receivedAt;
  }
  return item;
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.CallbackResult | null}
 */
function callback(request) {
  var body = request.json;
  if (body !== null && typeof body === "object" && body.type === "inbound") {
    return {inbound: [inbound(body)]};
  }
  var out = receipts(body);
  return out.length > 0 ? {receipts: out} : null;
}
