// Package wiring turns what the runtime loader and the package loader produced into the
// configuration of each provider kind: the one mapping from engine/runtime values to
// httpgw.Config (and to the sandbox limits every adapter runs under).
//
// serve, dev, bench and check (cmd/switchboard) and the examples' adapter tests all call it, so
// that a new authentication kind, callback verifier or runtime value is wired once. It imports
// engine, engine/runtime, packages, providers/httpgw and scripting; nothing imports it but
// commands and tests.
package wiring
