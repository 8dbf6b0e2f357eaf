// Package api is Switchboard's HTTP server: the routes of the API (the operator API's are in
// docs/api.md), problem+json errors from one table, the body cap, Cache-Control, authentication
// and rate limits, the refusal of cross-site requests, the OpenAPI document, the operator
// console's embedded files (docs/console.md), the listener's TLS certificate and its reloads
// (certs.go), and the client's address and origin behind trusted proxies (proxies.go).
// Handlers decode and encode; the engine decides.
//
// Request bodies are read once, strictly, by packages/jsonread, and decoded from its index by
// hand (members.go, submission_decode.go); problems never repeat submitted text (docs/api.md).
//
// It imports engine, engine/auth, packages and the standard library. It must never import a
// concrete store or provider, goja or libp2p.
package api
