// Package providertest is the conformance suite every engine.Provider runs (one suite, every
// implementation; docs/architecture.md, "The seams"): Exercise checks the kind, an idempotent Close,
// cancellation before sending, and the classification of an accepted send, a definite refusal,
// and a failure after the request left. The Harness connects a provider to a far side that a
// test can make accept, refuse, drop or stall, so that httpgw (an httptest server), smtp (an
// in-process go-smtp server) and peer (a second libp2p host) can all run it.
//
// providertest imports engine (types) and the standard library only. It must never import a
// concrete provider or store.
package providertest
