// TypeScript declarations of the Switchboard adapter API, for editors and `tsc --checkJs`.
//
// An adapter is one classic script (no modules) that defines these functions:
//
//   prepare(message, profile)   required: the HTTP request to send            -> PreparedRequest
//   interpret(response)         optional: what the gateway's answer means     -> Interpretation | null
//   receipt(request)            a verified callback's delivery reports        -> Receipt | Receipt[] | null
//   callback(request)           in place of receipt: reports and inbound messages -> CallbackResult | null
//
// Annotate them with JSDoc so that editors complete and `tsc` checks the code, for example
//
//   // @ts-check
//   /** @param {Switchboard.Message} message @param {Switchboard.Profile} profile
//       @returns {Switchboard.PreparedRequest} */
//   function prepare(message, profile) { ... }
//
// The host helpers encoding, crypto and console are globals. There is no eval, no Function
// constructor, no timers, no network and no file access: the declarations below are the whole
// environment besides the ECMAScript built-ins.

declare namespace Switchboard {
  /** What a message is, fixed by its sender profile. */
  type Channel = "email" | "sms" | "peer" | "chat" | "push";

  /** The message prepare builds a request for. */
  interface Message {
    /** The message id (a UUID): stable across attempts, a good gateway-side reference. */
    messageId: string;
    /** Starts at 1; an operator retry or a settle as not-sent starts the next one. */
    generation: number;
    /** The attempt within the generation, from 1. */
    attempt: number;
    channel: Channel;
    /** The address as a string: an E.164 number (sms), an email address, a peer id, or the
     * chat gateway's own address (a channel id, a chat id), or a push gateway's device
     * registration token. */
    recipient: string;
    /** The rendered parts by name. */
    parts: Parts;
    /** null unless the package declares the provider idempotentSubmit: true; then the same for
     * every attempt of a generation. */
    idempotencyKey: string | null;
  }

  /** Rendered parts: sms text; email subject, text and html; chat text and body (one JSON
   * document, such as Slack blocks, checked when it was rendered); peer body; push title,
   * body and data (the JSON text of an object of strings, at most 4 KiB, checked when it was
   * rendered or submitted). */
  interface Parts {
    text?: string;
    subject?: string;
    html?: string;
    body?: string;
    title?: string;
    data?: string;
  }

  /** The sender profile, and the values the runtime file gives this provider. */
  interface Profile {
    id: string;
    channel: Channel;
    /** The profile's sender: an E.164 number or alphanumeric id (sms), an email address, an
     * optional name (chat), "" when none. */
    sender: string;
    /** sms only; null for the other channels. */
    maximumSegments: number | null;
    /** The full public URL of this provider's callback route (with the path token for a
     * path-token verifier), from the runtime file's publicUrl; null without one. */
    callbackUrl: string | null;
    /** The runtime file's parameters of this provider (never secrets); {} when none. */
    parameters: { [name: string]: string };
  }

  /** How prepare's body is sent: json (any JSON value), form (an object of strings, sent
   * sorted by name) or text (a string). Without it a string is text and anything else json. */
  type BodyFormat = "json" | "form" | "text";

  /** The request prepare returns. */
  interface PreparedRequest {
    /** A path relative to the runtime file's baseUrl that may not leave it: no leading "/", no
     * "..", no absolute URL. "./" is the baseUrl itself; "?a=1" the baseUrl with a query. */
    target: string;
    /** Only headers provider.yaml declares in request.headers; never runtime-owned ones. */
    headers?: { [name: string]: string };
    bodyFormat?: BodyFormat;
    body?: unknown;
  }

  /** The gateway's answer, as interpret sees it. */
  interface GatewayResponse {
    status: number;
    /** Only the headers provider.yaml declares in responseHeaders, names in lower case. */
    headers: { [name: string]: string };
    /** Decoded from JSON when the answer is JSON (application/json, +json, AWS's
     * application/x-amz-json-1.0 and -1.1; numbers as numbers), else the text. */
    body: any;
  }

  /** accepted: the gateway took it; transient: not sent, try later; permanent: not sent,
   * never will be (needs code); maybe-sent: it may have gone. */
  type Outcome = "accepted" | "transient" | "permanent" | "maybe-sent";

  /** What interpret returns; null lets the default table decide. */
  interface Interpretation {
    outcome: Outcome;
    /** The gateway's id of the message, matched byte for byte by receipts. */
    providerReference?: string;
    /** Seconds; can only lengthen the backoff. */
    retryAfter?: number;
    /** 1 to 64 characters of [A-Za-z0-9._:-], prefixed with the gateway. */
    code?: string;
    /** permanent outcomes only: the recipient's device token is no longer valid (a push
     * gateway's unregistered token); the application gets a device.unregistered event. */
    deviceUnregistered?: boolean;
    /** not on accepted: the gateway refused the credential as stale (APNs'
     * ExpiredProviderToken); the runtime renews it and sends once more. */
    renewCredential?: boolean;
  }

  /** A callback the runtime has already verified, as receipt and callback see it. */
  interface CallbackRequest {
    method: string;
    /** Each query parameter's first value. */
    query: { [name: string]: string };
    /** Each form field's first value when the body is form-encoded, else null. */
    form: { [name: string]: string } | null;
    /** The body decoded when it is JSON, else null. */
    json: any;
    /** The raw body. */
    body: string;
  }

  type Report = "sent" | "delivered" | "undelivered";

  /** One delivery report. */
  interface Receipt {
    providerReference: string;
    report: Report;
    /** A gateway code for the report, same form as Interpretation.code. */
    code?: string;
  }

  /** One inbound message (a reply SMS, a chat message) a gateway posted. */
  interface InboundMessage {
    /** The sender's address as the gateway gives it, at most 256 characters. */
    from: string;
    /** The address it was sent to, at most 256 characters. */
    to: string;
    /** At most 64 KiB. */
    text: string;
    /** The gateway's id of the inbound message: each is stored once per provider. */
    providerReference: string;
    /** RFC 3339. */
    receivedAt?: string;
  }

  /** What callback returns: receipts, inbound messages, both or neither. */
  interface CallbackResult {
    receipts?: Receipt[];
    inbound?: InboundMessage[];
  }

  /** The entry points, for `/** @type {Switchboard.Prepare} *\/` annotations. */
  type Prepare = (message: Message, profile: Profile) => PreparedRequest;
  type Interpret = (response: GatewayResponse) => Interpretation | null;
  type ReceiptFunction = (request: CallbackRequest) => Receipt | Receipt[] | null;
  type CallbackFunction = (request: CallbackRequest) => CallbackResult | null;

  /** A text codec: bytes are always the UTF-8 encoding of a string. Malformed input, or a
   * decode whose bytes are not UTF-8, throws a TypeError. */
  interface Codec {
    encode(text: string): string;
    decode(encoded: string): string;
  }
}

/** Encodings of text's UTF-8 bytes: base64 (padded), base64url (unpadded), hex (lower case). */
declare const encoding: {
  readonly base64: Switchboard.Codec;
  readonly base64url: Switchboard.Codec;
  readonly hex: Switchboard.Codec;
};

/** Digests over data the script holds, as lower-case hex. */
declare const crypto: {
  sha256(data: string): string;
  sha1(data: string): string;
  hmacSha256(key: string, data: string): string;
};

/** Lines into the structured log, truncated and rate-limited. */
declare const console: {
  log(...values: unknown[]): void;
  warn(...values: unknown[]): void;
  error(...values: unknown[]): void;
};
