// Package httpgw is the provider for HTTP gateways (SMS, chat, email and push APIs) driven by a small
// JavaScript adapter (examples/adapters/README.md is the guide to writing one).
//
// It owns the whole send path of one http provider: turning an engine.Outbound into the plain
// input of the adapter's prepare function, validating what prepare returns (the target must stay
// under the runtime's baseUrl, only declared headers, never runtime-owned ones), adding the
// credential (none, basic, static authorization, static API key, OAuth 2.0 client credentials,
// an AWS Signature Version 4 over the whole request, a Google service account's access token,
// or an APNs provider token), performing the request (over HTTP/2 alone when the runtime asks)
// without following redirects under the provider's concurrency limit, rate and timeout, and
// classifying the answer with the adapter's interpret function or the
// default table. It also owns the receipt side (engine.ReceiptHandler): the callback verifiers
// (verify_*.go, one file per scheme behind the Verifier interface) and running the adapter's
// receipt function over a verified callback.
//
// Decisions on uncertain cases (each documented where it is made):
//   - prepare fails: deadline → transient (it may pass next time); failed, output-invalid and
//     output-too-large → permanent, code script.<class>;
//   - the answer is larger than MaximumResponseBytes → maybe-sent, code http.response-too-large
//     (the gateway answered but the adapter cannot read what it said);
//   - interpret fails after a 2xx → maybe-sent, code script.<class> (the gateway may have taken
//     it); after any other status → the default table's class, code script.<class>;
//   - a transport failure before the request was written → transient; after → maybe-sent;
//   - interpret asks to renew the credential (renewCredential) → the token the request carried
//     is dropped and the request sent once more; the second answer's outcome stands;
//   - the token endpoint refuses a grant (400, 401, 403) → permanent, auth.grant-refused.
//
// httpgw imports engine (types only), scripting, the standard library, x/time/rate, AWS's SigV4
// signer (aws-sdk-go-v2's aws/signer/v4, for aws-sigv4), golang.org/x/oauth2's google and jwt
// packages (google-service-account), go-jose (apns-token) and the leaf packages engine/pubkey,
// engine/pushkey and engine/adapterparam. It must never import packages, store, engine/runtime, goja or libp2p:
// cmd/wiring maps the runtime file's resolved values into Config.
package httpgw
