// Package storetest is the conformance suite of engine.Store: Exercise runs every behaviour
// the engine relies on (acceptance and idempotency, daily quotas, claims and byte budgets,
// leases and fencing, cancel and expiry, receipts, stats, the audit chain) against one
// implementation, so that SQLite and PostgreSQL stores are held to the same contract.
//
// It imports engine, engine/enginetest, store (for the audit report type) and the standard
// library. It must never import a provider, scripting, goja or libp2p.
package storetest
