// Package api is Switchboard's HTTP server: the routes of SPEC section 5, problem+json errors
// from one table, the body cap, Cache-Control, authentication and rate limits, and the OpenAPI
// document. Handlers decode and encode; the engine decides.
//
// Request bodies are read once, strictly, by packages/jsonread, and decoded from its index by
// hand (members.go, submission_decode.go); problems never repeat submitted text (docs/api.md).
//
// It imports engine, engine/auth, packages and the standard library. It must never import a
// concrete store or provider, goja or libp2p.
package api
