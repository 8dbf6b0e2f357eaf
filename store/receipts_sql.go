package store

// SQL of receipts: matching by (provider, provider reference), and the receipts kept until an
// attempt records their reference.

type receiptSQL struct {
	providerReport string
	match          string
	applyReport    string
	// applyJournaled, set on PostgreSQL only (dialect.foldWrites), is applyReport and the
	// audit insert of the applied receipt as one statement: one round trip instead of two.
	applyJournaled string
	keep           string
	pending        string
	markApplied    string
	stranded       string
}

func newReceiptSQL(d *dialect) receiptSQL {
	q := receiptSQL{
		providerReport: d.rebind(`SELECT provider, report FROM messages WHERE id = ?`),
		// On PostgreSQL a message row that another transaction holds (a finish or claim in
		// progress) is skipped: the receipt is kept and applied by the next reconcile pass, so
		// that receipts never wait for, or deadlock with, another writer's locks.
		match: d.rebind(`SELECT id, report FROM messages WHERE provider = ? AND provider_ref = ?` + d.lockMatch),
		applyReport: d.rebind(`UPDATE messages SET report = ?, event_seq = event_seq + 1, reported_at = ?, updated_at = ?
			WHERE id = ?`),
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
	if d.foldWrites {
		q.applyJournaled = d.rebind(applyJournaled)
	}
	return q
}

// applyJournaled applies a receipt's report to a message and journals it, in one statement
// (PostgreSQL). Its parameters are applyReport's, then the audit record's; it answers how
// many messages it updated.
const applyJournaled = `WITH u AS (
	UPDATE messages SET report = CAST(? AS TEXT), event_seq = event_seq + 1, reported_at = CAST(? AS BIGINT), updated_at = CAST(? AS BIGINT)
	WHERE id = CAST(? AS TEXT)
	RETURNING id
)` + journalUpdated + `
SELECT count(*) FROM u`
