// Package api is Switchboard's HTTP server: the routes of SPEC section 5, problem+json errors
// from one table, the body cap, Cache-Control, authentication and rate limits, and the OpenAPI
// document. Handlers decode and encode; the engine decides.
//
// It imports engine, engine/auth, packages and the standard library. It must never import a
// concrete store or provider, goja or libp2p.
package api
