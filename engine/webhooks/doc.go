// Package webhooks delivers events to applications (docs/webhooks.md): it claims the outbox rows
// the store wrote in the transactions of the changes they report, builds each event's body from
// the message or inbox entry as it stands when it is sent, signs it as Standard Webhooks v1 at
// send time, posts it, and records the outcome under the row's lease, retrying on the schedule
// of docs/webhooks.md.
//
// Each endpoint has its own claim loop (engine.ClaimLoop, the dispatcher's page, lease and
// fence code), its own workers and its own HTTP connections, so a slow or dead endpoint holds
// only its own rows and workers.
//
// webhooks imports engine, engine/api (the message and inbox views the events carry),
// engine/stdwebhook, packages and the standard library; never a concrete store or provider.
package webhooks
