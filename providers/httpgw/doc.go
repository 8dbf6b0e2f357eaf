// Package httpgw is the provider for HTTP gateways (SMS, chat and email APIs) driven by a small
// JavaScript adapter (examples/adapters/README.md is the guide to writing one).
//
// It owns the whole send path of one http provider: turning an engine.Outbound into the plain
// input of the adapter's prepare function, validating what prepare returns (the target must stay
// under the runtime's baseUrl, only declared headers, never runtime-owned ones), adding the
// credential (none, basic, static authorization, static API key, OAuth 2.0 client credentials,
// or an AWS Signature Version 4 over the whole request),
// performing the request without following redirects under the provider's concurrency limit,
// rate and timeout, and classifying the answer with the adapter's interpret function or the
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
//   - a transport failure before the request was written → transient; after → maybe-sent.
//
// httpgw imports engine (types only), scripting, the standard library, x/time/rate, AWS's SigV4
// signer (aws-sdk-go-v2's aws/signer/v4, for aws-sigv4) and the leaf packages engine/pubkey and
// engine/adapterparam. It must never import packages, store, engine/runtime, goja or libp2p:
// cmd/wiring maps the runtime file's resolved values into Config.
package httpgw
