package store

import (
	"strings"

	"switchboard/engine"
)

// SQL of receipts: matching by (provider, provider reference), and the receipts kept until an
// attempt records their reference.

type receiptSQL struct {
	providerReport string
	match          string
	matchMany      string
	// applyReport moves a message's report to its key, a guarded update built from the
	// engine's report steps: it changes the report only from one that the key is a step
	// forward from (engine.ReportsBefore), so no receipt ever moves a report back. It sets the
	// message's reason with it (engine.ReceiptReason).
	applyReport map[engine.Report]string
	// applyJournaled, set on PostgreSQL only (dialect.foldWrites), is applyReport and the
	// audit insert of the applied receipt as one statement: one round trip instead of two.
	applyJournaled map[engine.Report]string
	// applyMany is applyJournaled over arrays, for the receipts a pipeline runs as one
	// statement (pipeline_many.go).
	applyMany   map[engine.Report]string
	keep        string
	pending     string
	markApplied string
	stranded    string
}

func newReceiptSQL(d *dialect) receiptSQL {
	q := receiptSQL{
		providerReport: d.rebind(`SELECT provider, report FROM messages WHERE id = ?`),
		// On PostgreSQL a message row that another transaction holds (a finish or claim in
		// progress) is skipped: the receipt is kept and applied by the next reconcile pass, so
		// that receipts never wait for, or deadlock with, another writer's locks.
		match: d.rebind(`SELECT id FROM messages WHERE provider = ? AND provider_ref = ?` + d.lockMatch),
		// The references of a batch's receipts at once (receipts_prefetch.go); rebound when
		// its IN list is expanded.
		matchMany: `SELECT id, provider_ref, report FROM messages WHERE provider = ? AND provider_ref IN (?)` + d.lockMatch,
		keep: d.rebind(`INSERT INTO receipts (provider, provider_ref, report, code, received_at)
			VALUES (?, ?, ?, ?, ?)`),
		// Read at every finish that records a reference, and nearly always empty: without an
		// ORDER BY it costs half as much on SQLite (4.9 against 9.7 µs), and the few rows it
		// finds are put in arrival order by the caller.
		pending: d.rebind(`SELECT id, report, code, received_at FROM receipts
			WHERE provider = ? AND provider_ref = ? AND applied = 0`),
		markApplied: d.rebind(`UPDATE receipts SET applied = 1, applied_at = ?
			WHERE provider = ? AND provider_ref = ? AND applied = 0`),
		// Kept receipts whose reference a message holds by now: on PostgreSQL a receipt can be
		// kept by one transaction while another records its reference, each unseen by the other.
		stranded: d.rebind(`SELECT DISTINCT m.id, r.provider_ref FROM receipts AS r
			JOIN messages AS m ON m.provider = r.provider AND m.provider_ref = r.provider_ref
			WHERE r.applied = 0 AND r.received_at >= ? LIMIT ?`),
	}
	q.applyReport = map[engine.Report]string{}
	if d.foldWrites {
		q.applyJournaled = map[engine.Report]string{}
		q.applyMany = map[engine.Report]string{}
	}
	for _, to := range engine.ReportStates() {
		from := engine.ReportsBefore(to)
		if len(from) == 0 {
			continue // no receipt leads there
		}
		guard := reportGuard(from)
		q.applyReport[to] = d.rebind(`UPDATE messages SET report = '` + string(to) + `', event_seq = event_seq + 1, reported_at = ?, updated_at = ?,
			reason_code = ?, reason_by = ? WHERE id = ? AND ` + guard)
		if d.foldWrites {
			q.applyJournaled[to] = d.rebind(`WITH u AS (
	UPDATE messages SET report = '` + string(to) + `', event_seq = event_seq + 1, reported_at = CAST(? AS BIGINT), updated_at = CAST(? AS BIGINT),
		reason_code = CAST(? AS TEXT), reason_by = CAST(? AS TEXT)
	WHERE id = CAST(? AS TEXT) AND ` + guard + `
	RETURNING id
)` + journalUpdated + `
SELECT count(*) FROM u`)
			q.applyMany[to] = d.rebind(applyMany(string(to), guard))
		}
	}
	return q
}

// reportGuard is the condition that a message's report is one of from (engine report states:
// fixed words, never caller input).
func reportGuard(from []engine.Report) string {
	words := make([]string, len(from))
	for i, r := range from {
		words[i] = `'` + string(r) + `'`
	}
	return `report IN (` + strings.Join(words, ", ") + `)`
}
