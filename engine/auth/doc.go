// Package auth decides who is calling and what they may do (docs/api.md, "Authentication"):
//
//   - Verifier checks `Authorization: Bearer` JWT access tokens (RFC 9068 at+jwt): algorithm
//     allow-list (RS256, ES256, EdDSA), signature against a JWK Set fetched over HTTP (cached,
//     refetched on an unknown kid at most every 30 s) or read from a file, issuer, audience,
//     lifetime, subject and an allowed client. Verified tokens are cached by their SHA-256 until
//     they expire, because a signature check costs tens of microseconds on the accept path.
//   - Authorize maps the token's client to its one access profile and checks the profile's
//     required scopes.
//   - Limiter is the per-caller token bucket of an access profile (requestsPerMinute, burst).
//   - Pseudonym makes the keyed, irreversible names under which callers and recipients appear in
//     the audit journal.
//   - DevIssuer signs real tokens for `switchboard dev`, `dev token`, `bench` and tests.
//
// Every refusal is an *engine.Problem: authentication.refused (401, see WWWAuthenticate),
// operation.not-authorized (403), rate-limit.exceeded (429, with RetryAfter) or
// service.unavailable (503) when the JWK Set cannot be fetched and no cached key fits.
//
// auth imports engine (problems, codes, Clock), packages (access profiles), the standard
// library, go-jose and golang.org/x/time/rate. It must never import store, providers,
// scripting, engine/api, goja or libp2p. Its test helper package authtest must not import auth.
package auth
