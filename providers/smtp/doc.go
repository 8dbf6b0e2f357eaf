// Package smtp is the provider for SMTP relays (docs/runtime.md, "Provider kind"): it turns an
// engine.Outbound into a MIME message, signs it with DKIM when configured, hands it to the relay
// over a pooled, reused connection, and classifies what happened.
//
// It owns the whole send path of one smtp provider:
//   - transport security: starttls (required: a relay that does not offer STARTTLS is a
//     transient failure, the message never travels in plain text), implicit TLS, or none (only
//     towards a loopback host); the system roots or a trusted CA file; AUTH PLAIN or LOGIN
//     (go-sasl) when credentials are configured;
//   - the message (message.go): From, To, Subject (RFC 2047 when not ASCII, or when it holds
//     "=?" or a run too long to fold), Date, a Message-ID
//     derived from the message id (the provider reference, stable across attempts), UTF-8 text
//     and html as multipart/alternative, 7bit when plain ASCII and quoted-printable otherwise,
//     CRLF line endings; DKIM (dkim.go, go-msgauth): relaxed/relaxed over From, To, Subject,
//     Date, Message-ID, MIME-Version and Content-Type with an RSA or Ed25519 key;
//   - connections (pool.go): at most ConcurrencyLimit conversations at once, their connections
//     kept for the next message to the same relay, dropped after an error, after
//     MaxMessagesPerConnection messages or IdleTimeout of rest;
//   - classification (classify.go), the engine's "errors say whether to try again": 2xx after
//     DATA → accepted, report unavailable; a 4xx reply at any step → transient, code smtp.<code>;
//     a 5xx reply at any step (the greeting and AUTH's 535 included) → permanent, code
//     smtp.<code>; a connection failure, a timeout or a cancellation before the end of the DATA
//     body was written → transient; a timeout or broken connection after the whole body was
//     written and before the final reply → maybe-sent.
//
// Decisions on uncertain cases (each documented where it is made): a write that fails while
// sending the body, its terminating dot included, is transient (a relay only takes a message once
// it has read the final ".", and a failed write means the last bytes did not leave); a message the
// provider cannot build (an address that does not parse, non-ASCII addresses towards a relay
// without SMTPUTF8) is permanent; configuration problems the operator can fix without touching
// the message (STARTTLS or AUTH not offered, a TLS handshake failure) are transient.
//
// smtp imports engine (types only), go-smtp, go-sasl, go-msgauth, go-message, its own dkimkey
// and the standard library. It must never import packages, store, scripting or engine/runtime:
// cmd/ maps the runtime's resolved values into Config.
package smtp
