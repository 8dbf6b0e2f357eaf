package store

// SQL of bulk operations (the operations table) and of a message's journal.

const operationColumns = `id, action, status, sender_profile, accepted_before, actor, state, total,
	done, failed, cursor, error, created_at, updated_at, finished_at, lease_token, lease_expires_at`

type operationSQL struct {
	insert   string
	byID     string
	progress string
	lapsed   string
	takeOver string
	journal  string
}

func newOperationSQL(d *dialect) operationSQL {
	return operationSQL{
		insert: d.rebind(`INSERT INTO operations (id, action, status, sender_profile, accepted_before,
			actor, state, total, done, failed, cursor, error, created_at, updated_at, lease_token,
			lease_expires_at) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, 0, 0, '', '', ?, ?, ?, ?)`),
		byID: d.rebind(`SELECT ` + operationColumns + ` FROM operations WHERE id = ?`),
		// Fenced by the lease: an instance that lost the operation writes nothing.
		progress: d.rebind(`UPDATE operations SET done = done + ?, failed = failed + ?, cursor = ?,
			state = ?, error = ?, updated_at = ?, lease_expires_at = ?,
			finished_at = CASE WHEN CAST(? AS TEXT) = 'running' THEN NULL ELSE CAST(? AS BIGINT) END,
			lease_token = CASE WHEN CAST(? AS TEXT) = 'running' THEN lease_token ELSE NULL END
			WHERE id = ? AND state = 'running' AND lease_token = ?`),
		lapsed: d.rebind(`SELECT id FROM operations WHERE state = 'running' AND lease_expires_at < ?
			ORDER BY lease_expires_at LIMIT 1`),
		takeOver: d.rebind(`UPDATE operations SET lease_token = ?, lease_expires_at = ?, updated_at = ?
			WHERE id = ? AND state = 'running' AND lease_expires_at < ?`),
		// The partial index audit_message holds records that name a message; the literal
		// condition lets the planner see that this query stays inside it.
		journal: d.rebind(`SELECT writer, seq, at, event, actor, message_id, outcome, prev_mac, mac FROM audit
			WHERE message_id = ? AND message_id <> '' ORDER BY at, writer, seq LIMIT ?`),
	}
}
