package store

// SQL of retention (docs/operations.md, "Retention and erasure"). A message's record and payload are erased only in a final
// state: final_at is set only there, and every statement checks the dispatch state again. Each
// batch selects at most its limit through a partial index that holds only what is still to be
// erased (migration 0002), so a batch reads what it erases and nothing more.

// finalStates is the SQL list of the final dispatch states, the only ones retention touches.
const finalStates = `('submitted', 'failed', 'cancelled', 'expired')`

const (
	payloadCandidates = `FROM messages INDEXED BY messages_erasable
		WHERE final_at IS NOT NULL AND payload_erased_at IS NULL AND final_at <= ?
		AND dispatch IN ` + finalStates
	erasedCandidates = `FROM messages INDEXED BY messages_erased
		WHERE payload_erased_at IS NOT NULL AND final_at <= ? AND dispatch IN ` + finalStates
	receiptCandidates = `FROM idempotency INDEXED BY idempotency_unerased
		WHERE erased_at IS NULL AND created_at <= ?`
)

type retentionSQL struct {
	payloadSelect string
	payloadDelete string
	payloadMark   string
	payloadCount  string

	erasedSelect  string
	erasedCount   string
	recordsDelete string

	receiptsErase string
	receiptsCount string

	providerReceiptsDelete string
	providerReceiptsCount  string

	inboxPayloadsErase string
	inboxPayloadsCount string
	inboxRecordsDelete string
	inboxRecordsCount  string
}

func newRetentionSQL(d *dialect) retentionSQL {
	return retentionSQL{
		payloadSelect: d.rebind(`SELECT seq ` + payloadCandidates + ` ORDER BY final_at LIMIT ?`),
		payloadDelete: `DELETE FROM payloads WHERE message_seq IN (?)`,
		payloadMark: `UPDATE messages SET payload_erased_at = ?
			WHERE seq IN (?) AND payload_erased_at IS NULL AND dispatch || '' IN ` + finalStates,
		payloadCount: d.rebind(`SELECT count(*) ` + payloadCandidates),

		erasedSelect: d.rebind(`SELECT seq ` + erasedCandidates + ` ORDER BY final_at LIMIT ?`),
		erasedCount:  d.rebind(`SELECT count(*) ` + erasedCandidates),
		// Attempts and any payload left go with the record: SQLite's foreign keys cascade, and
		// on PostgreSQL a trigger deletes them (migration 0008).
		recordsDelete: `DELETE FROM messages WHERE seq IN (?) AND dispatch || '' IN ` + finalStates,

		// The key stays: a replay finds the record and answers 410. The answer and the request
		// hash (a digest of the submission, recipient included) go.
		receiptsErase: d.rebind(`UPDATE idempotency SET response = NULL, request_hash = ?, erased_at = ?
			WHERE erased_at IS NULL AND (issuer, subject, key) IN
			(SELECT issuer, subject, key ` + receiptCandidates + ` ORDER BY created_at LIMIT ?)`),
		receiptsCount: d.rebind(`SELECT count(*) ` + receiptCandidates),

		// Kept receipts arrive in id order, so the oldest are first.
		providerReceiptsDelete: d.rebind(`DELETE FROM receipts WHERE id IN
			(SELECT id FROM receipts WHERE received_at <= ? ORDER BY id LIMIT ?)`),
		providerReceiptsCount: d.rebind(`SELECT count(*) FROM receipts WHERE received_at <= ?`),

		inboxPayloadsErase: d.rebind(`UPDATE peer_inbox SET payload = NULL, payload_erased_at = ?
			WHERE id IN (SELECT id FROM peer_inbox INDEXED BY peer_inbox_received
			WHERE received_at <= ? AND payload_erased_at IS NULL ORDER BY received_at, id LIMIT ?)`),
		inboxPayloadsCount: d.rebind(`SELECT count(*) FROM peer_inbox INDEXED BY peer_inbox_received
			WHERE received_at <= ? AND payload_erased_at IS NULL`),
		inboxRecordsDelete: d.rebind(`DELETE FROM peer_inbox WHERE id IN
			(SELECT id FROM peer_inbox INDEXED BY peer_inbox_received
			WHERE received_at <= ? ORDER BY received_at, id LIMIT ?)`),
		inboxRecordsCount: d.rebind(`SELECT count(*) FROM peer_inbox INDEXED BY peer_inbox_received
			WHERE received_at <= ?`),
	}
}
