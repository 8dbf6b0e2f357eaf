// Package mockgw is the stand-in HTTP SMS and chat gateway of `switchboard dev` and
// `switchboard bench`.
//
// It accepts POST /messages with the JSON the quickstart adapter sends ({to, from, text,
// reference}, x-request-id = message id), answers 201 {"id": "<gateway reference>"} after a
// configurable latency, and later posts a signed delivery report {"id", "status": "delivered"}
// to a callback URL (hmac-sha256-body, hex, header x-signature) from a bounded worker pool, with
// bounded retries on 5xx. It counts what it took per reference so that tests and bench can tell
// how many messages it saw more than once, and under which Idempotency-Key header each was
// taken; it can honour those keys as an idempotent gateway does (a repeated key gets the first
// answer and is not taken again), and can be told to refuse a fraction of requests (503) or to
// take a fraction and never answer (the crash and maybe-sent tests). POST /inbound {from, text}
// makes it post a signed inbound message {type: "inbound", id, from, to, text, receivedAt} to the
// callback URL, as a reply SMS would arrive.
//
// Its chat side is Slack-like (chat.go): POST …/chat.postMessage {channel, text, blocks?,
// username?} answers 200 {"ok": true, "channel", "ts"} (errors as 200 {"ok": false, "error"}),
// and GET …/conversations.history?channel=C lists what a channel received, so that a developer
// sees the chat messages a dev stack sent.
//
// mockgw imports only the standard library. It must never import engine, store, scripting or
// the httpgw provider: it stands on the far side of the wire.
package mockgw
