package store

// SQL of receipts: matching by (provider, provider reference), and the receipts kept until an
// attempt records their reference.

type receiptSQL struct {
	providerReport string
	match          string
	applyReport    string
	keep           string
	pending        string
	markApplied    string
}

func newReceiptSQL(d *dialect) receiptSQL {
	return receiptSQL{
		providerReport: d.rebind(`SELECT provider, report FROM messages WHERE id = ?`),
		match:          d.rebind(`SELECT id, report FROM messages WHERE provider = ? AND provider_ref = ?`),
		applyReport: d.rebind(`UPDATE messages SET report = ?, reported_at = ?, updated_at = ?
			WHERE id = ?`),
		keep: d.rebind(`INSERT INTO receipts (provider, provider_ref, report, code, received_at)
			VALUES (?, ?, ?, ?, ?)`),
		pending: d.rebind(`SELECT report, code, received_at FROM receipts
			WHERE provider = ? AND provider_ref = ? AND applied = 0 ORDER BY id`),
		markApplied: d.rebind(`UPDATE receipts SET applied = 1, applied_at = ?
			WHERE provider = ? AND provider_ref = ? AND applied = 0`),
	}
}
