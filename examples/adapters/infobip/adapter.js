// @ts-check
// Adapter for the Infobip SMS API (fully featured text message), with delivery reports and
// inbound SMS.
//
// Request:  POST <baseUrl>sms/2/text/advanced (baseUrl https://{your-subdomain}.api.infobip.com/),
//           JSON {"messages": [{"from", "destinations": [{"to", "messageId"}], "text",
//           "notifyUrl"?, "notifyContentType": "application/json", "callbackData"}]}; the
//           runtime adds Authorization: App <API key>. Infobip, "Send fully-featured textual
//           message" and "Delivery reports on Notify URL".
// Answer:   200 {"bulkId"?, "messages": [{"to", "status": {"groupId", "groupName": "PENDING",
//           "id", "name": "PENDING_ENROUTE", "description"}, "messageId"}]}: a message can be
//           refused inside a 200 (status group REJECTED, e.g. REJECTED_NOT_ENOUGH_CREDITS). An
//           error is {"requestError": {"serviceException": {"messageId": "BAD_REQUEST" |
//           "UNAUTHORIZED" | "TOO_MANY_REQUESTS" | …, "text": "…"}}} with 400, 401, 429, 500.
//           Infobip, "Response status and error codes".
// Callback: {"results": [{"bulkId", "messageId", "to", "sentAt", "doneAt", "smsCount",
//           "callbackData", "status": {"groupName": PENDING | UNDELIVERABLE | DELIVERED |
//           EXPIRED | REJECTED, "name", …}, "error": {"groupName", "name", "permanent"}}]}: up
//           to 100 reports in one request, retried by Infobip when not answered 2xx.
//           Infobip, "Receive outbound SMS message report".
// Inbound:  {"results": [{"messageId", "from", "to", "text", "cleanText", "keyword",
//           "receivedAt", "smsCount"}], "messageCount", "pendingMessageCount"} posted to the
//           number's forwarding URL (the same URL). Infobip, "Receive inbound SMS messages".
//
// The message's destination messageId is Switchboard's message id, so that a report matches
// even before the answer is recorded; the answer's messageId is the reference all the same.
// Infobip signs reports only through its subscriptions (not per-message notifyUrl): the URL
// carries a path token (the runtime's path-token verifier), and profile.callbackUrl includes it.

// status.groupName → report. PENDING means handed to the operator (sent).
var REPORTS = {
  PENDING: "sent",
  DELIVERED: "delivered",
  UNDELIVERABLE: "undelivered",
  EXPIRED: "undelivered",
  REJECTED: "undelivered"
};

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// lookup reads table[key] only for the table's own keys (never "constructor", "toString", …).
function lookup(table, key) {
  return typeof key === "string" && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

// codeOf turns an Infobip name (REJECTED_NOT_ENOUGH_CREDITS) into a code part (letters, digits
// and "-"), or "" when it is not a name.
function codeOf(name) {
  return typeof name === "string" && /^[A-Za-z0-9_]{1,50}$/.test(name) ? name.replace(/_/g, "-") : "";
}

/**
 * @param {Switchboard.Message} message
 * @param {Switchboard.Profile} profile
 * @returns {Switchboard.PreparedRequest}
 */
function prepare(message, profile) {
  /** @type {Record<string, unknown>} */
  var m = {
    from: profile.sender,
    destinations: [{to: message.recipient, messageId: message.messageId}],
    text: message.parts.text,
    callbackData: message.messageId
  };
  if (profile.callbackUrl !== null) {
    m.notifyUrl = profile.callbackUrl;
    m.notifyContentType = "application/json";
  }
  return {target: "sms/2/text/advanced", headers: {"content-type": "application/json"}, bodyFormat: "json", body: {messages: [m]}};
}

/**
 * @param {Switchboard.GatewayResponse} response
 * @returns {Switchboard.Interpretation | null}
 */
function interpret(response) {
  var status = response.status;
  var body = response.body;
  if (status >= 200 && status < 300) {
    var m = isObject(body) && Array.isArray(body.messages) && isObject(body.messages[0]) ? body.messages[0] : null;
    if (m === null) {
      return {outcome: "accepted"};
    }
    var st = isObject(m.status) ? m.status : {};
    if (st.groupName === "REJECTED") {
      var rejected = codeOf(st.name);
      return {outcome: "permanent", code: rejected !== "" ? "infobip." + rejected : "infobip.REJECTED"};
    }
    if (typeof m.messageId === "string" && m.messageId !== "") {
      return {outcome: "accepted", providerReference: m.messageId};
    }
    return {outcome: "accepted"};
  }
  var se = isObject(body) && isObject(body.requestError) && isObject(body.requestError.serviceException) ?
    body.requestError.serviceException : {};
  var name = codeOf(se.messageId);
  var code = name !== "" ? "infobip." + name : "infobip.http-" + status;
  if (se.messageId === "TOO_MANY_REQUESTS" || status === 408 || status === 429 || status === 503) {
    return {outcome: "transient", code: code};
  }
  if (status >= 500) {
    return {outcome: "maybe-sent", code: code};
  }
  return {outcome: "permanent", code: code};
}

// reportOf reads one delivery report.
function reportOf(r) {
  var st = isObject(r.status) ? r.status : {};
  var report = lookup(REPORTS, st.groupName);
  if (report === undefined || typeof r.messageId !== "string" || r.messageId === "") {
    return null;
  }
  var out = {providerReference: r.messageId, report: report};
  if (report === "undelivered") {
    // The error's name says why (EC_ABSENT_SUBSCRIBER, …); without one, the status's name.
    var err = isObject(r.error) ? codeOf(r.error.name) : "";
    var name = err !== "" && err !== "NO-ERROR" ? err : codeOf(st.name);
    out.code = "infobip." + (name !== "" ? name : st.groupName);
  }
  return out;
}

// inboundOf reads one inbound SMS.
function inboundOf(r) {
  if (typeof r.from !== "string" || r.from === "" || typeof r.text !== "string") {
    throw new Error("an Infobip inbound SMS carries messageId, from and text");
  }
  /** @type {Switchboard.InboundMessage} */
  var item = {from: r.from, to: typeof r.to === "string" ? r.to : "", text: r.text, providerReference: r.messageId};
  // Infobip writes "2016-10-06T09:28:39.220+0000": RFC 3339 wants the offset as +00:00.
  var at = typeof r.receivedAt === "string" ? /^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?)([+-][0-9]{2}):?([0-9]{2})$/.exec(r.receivedAt) : null;
  if (at !== null) {
    item.receivedAt = at[1] + at[3] + ":" + at[4];
  }
  return item;
}

/**
 * @param {Switchboard.CallbackRequest} request
 * @returns {Switchboard.CallbackResult | null}
 */
function callback(request) {
  var b = request.json;
  if (!isObject(b) || !Array.isArray(b.results)) {
    throw new Error("an Infobip callback is {\"results\": [...]}");
  }
  var receipts = [];
  var inbound = [];
  for (var i = 0; i < b.results.length; i++) {
    var r = b.results[i];
    if (!isObject(r) || typeof r.messageId !== "string" || r.messageId === "") {
      throw new Error("every Infobip result carries messageId");
    }
    if (isObject(r.status)) {
      var one = reportOf(r);
      if (one !== null) {
        receipts.push(one);
      }
    } else {
      inbound.push(inboundOf(r)); // inbound results have text and no status
    }
  }
  return receipts.length + inbound.length > 0 ? {receipts: receipts, inbound: inbound} : null;
}
