// Package adaptertest runs the golden cases of an HTTP gateway adapter: the files
// testdata/*.txtar beside an adapter's provider.yaml and adapter.js (and, in examples, its
// runtime-snippet.yaml). `switchboard adapter test DIR` and the examples' Go tests call it.
//
// For every case it builds a real httpgw.Provider, with the adapter compiled in the real
// sandbox, against a real httptest gateway that answers as the case says, and drives it with
// an injected clock that starts at the case's `now` and moves one second before each event.
// It checks the HTTP request the adapter produced, the outcome of each send, what each
// callback (verified by the real verifier, signed by the runner or pre-signed) turned into, and
// the report a store would end with after matching receipts by provider reference. With update
// it rewrites the expected sections instead of comparing them. The case format is documented
// in examples/adapters/README.md and in casefile.go.
//
// Decisions:
//   - the gateway turns keep-alive off, so that net/http never silently replays a request
//     (it does for requests carrying Idempotency-Key on a reused connection that broke);
//   - the provider's ratePerSecond is ignored (tests must not wait), its concurrency kept;
//   - credentials are stand-ins of the snippet's authentication kind (oauth2-client-credentials,
//     google-service-account and apns-token become none): requests never show them, only the
//     headers the adapter may set and content-type; the gateway speaks HTTP/1.1 whatever the
//     snippet's http2 says;
//   - the ledger mirrors engine.Receipts.Record: exact reference match, reports only move
//     forward (engine.Report.Advances), receipts for an unknown reference are kept and applied
//     when an accepted outcome records that reference.
//
// adaptertest imports engine (types), providers/httpgw, the standard library, yaml and txtar.
// It must never import store, packages, engine/runtime, scripting internals or goja: it tests
// an adapter folder on its own, without a package or a runtime file.
package adaptertest
