package store

// SQL of operator actions. Each action is one guarded update: it changes the message only while
// it is in the action's from-state, and returns the generation it leaves the message in, so that
// a message that moved (claimed, finished, settled by someone else) is refused, never overwritten.

type operatorSQL struct {
	cancel        string
	newGeneration string
	settleSent    string
	state         string
}

func newOperatorSQL(d *dialect) operatorSQL {
	return operatorSQL{
		cancel: d.rebind(`UPDATE messages SET dispatch = 'cancelled', event_seq = event_seq + 1, final_at = ?, updated_at = ?,
			reason_code = ?, reason_by = ? WHERE id = ? AND dispatch = 'queued' RETURNING generation`),
		// A new generation starts from scratch on the sender profile's provider: no attempt yet,
		// no fallback, due now, no longer final, no reason. The reference of the old generation
		// goes, so that a late receipt for it cannot move the new generation's report.
		newGeneration: d.rebind(`UPDATE messages SET dispatch = 'queued', event_seq = event_seq + 1, generation = generation + 1,
			attempt = 0, provider_attempts = 0, fallback_index = 0, provider = coalesce(?, provider),
			provider_ref = NULL, next_attempt_at = ?, dispatch_code = '', final_at = NULL, updated_at = ?,
			reason_code = '', reason_by = ''
			WHERE id = ? AND dispatch = ? AND payload_erased_at IS NULL RETURNING generation`),
		settleSent: d.rebind(`UPDATE messages SET dispatch = 'submitted', event_seq = event_seq + 1, dispatch_code = '',
			reason_code = '', reason_by = '',
			final_at = ?, updated_at = ? WHERE id = ? AND dispatch = 'unknown' RETURNING generation`),
		state: d.rebind(`SELECT dispatch, payload_erased_at FROM messages WHERE id = ?`),
	}
}
