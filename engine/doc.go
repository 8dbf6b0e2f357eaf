// Package engine owns Switchboard's domain: the message model and its state machine,
// submission, the dispatcher, receipts, operator actions, retention and the audit journal.
//
// It also owns the seams the rest of the program plugs into: Provider (a transport),
// Store (durable state) and Clock (time). engine imports packages, the standard library and
// small leaf libraries only; it must never import a concrete provider (providers/...), a
// concrete store (store/...), goja or libp2p. cmd/switchboard wires the concrete parts in.
package engine
