package store

import "switchboard/engine"

// SQL of the messages aggregate: messages, payloads and attempts. Statements are written with
// ? placeholders and rebound for the dialect once, at Open.

// messageColumns are the metadata columns a messageRow scans; never the payload.
const messageColumns = `seq, id, dispatch, report, reported_at, channel, sender_profile, provider,
	provider_ref, recipient_kind, template_id, template_version, locale, correlation_id,
	access_profile, caller, accepted_at, not_before, expires_at, updated_at, next_attempt_at,
	generation, attempt, provider_attempts, fallback_index, payload_bytes, final_at,
	payload_erased_at, dispatch_code, idempotency_key, last_outcome_class, lease_token,
	lease_expires_at, sending_since, event_seq, reason_code, reason_by`

// attemptColumns are the columns an attemptRow scans.
const attemptColumns = `generation, attempt, provider, outcome, started_at, finished_at, code, provider_ref`

type messageSQL struct {
	insert        string
	insertPayload string
	byID          string
	attempts      string
	expireSelect  string
	expireUpdate  string
	expireAttempt string
	statsCounts   string
	statsOldest   string
	statsOversize string
	inFlight      string
}

func newMessageSQL(d *dialect) messageSQL {
	return messageSQL{
		insert: d.rebind(`INSERT INTO messages (id, dispatch, report, reported_at, channel,
			sender_profile, provider, provider_ref, recipient_kind, template_id, template_version,
			locale, correlation_id, access_profile, caller, accepted_at, not_before, expires_at,
			updated_at, next_attempt_at, generation, attempt, provider_attempts, fallback_index,
			payload_bytes, final_at, dispatch_code, idempotency_key, last_outcome_class)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			RETURNING seq`),
		insertPayload: d.rebind(`INSERT INTO payloads (message_seq, body) VALUES (?, ?)`),
		byID:          d.rebind(`SELECT ` + messageColumns + ` FROM messages WHERE id = ?`),
		attempts: d.rebind(`SELECT ` + attemptColumns + ` FROM attempts WHERE message_id = ?
			ORDER BY generation, attempt`),
		// The expiry sweep: queued messages past expires_at, oldest expiry first.
		expireSelect: d.rebind(`SELECT id FROM messages INDEXED BY messages_expiry
			WHERE dispatch = 'queued' AND expires_at <= ?
			ORDER BY expires_at LIMIT ?`),
		expireUpdate: `UPDATE messages SET dispatch = 'expired', event_seq = event_seq + 1, attempt = attempt + 1,
			final_at = ?, updated_at = ?, ` + reasonSet(engine.ExpiredReason()) + `
			WHERE id IN (?) AND dispatch || '' = 'queued'`,
		expireAttempt: `INSERT INTO attempts (message_id, generation, attempt, provider, outcome,
			started_at, finished_at, code, provider_ref)
			SELECT id, generation, attempt, provider, 'expired', CAST(? AS BIGINT), CAST(? AS BIGINT), 'expired', ''
			FROM messages WHERE id IN (?) AND dispatch || '' = 'expired'`,
		// Counts and bytes per dispatch, read from the narrow messages_size index.
		statsCounts: d.rebind(`SELECT dispatch, count(*) AS n, coalesce(sum(payload_bytes), 0) AS bytes
			FROM messages GROUP BY dispatch`),
		// The first due message in claim order.
		statsOldest: d.rebind(`SELECT next_attempt_at, not_before FROM messages INDEXED BY messages_due
			WHERE dispatch = 'queued' AND next_attempt_at <= ? AND (not_before IS NULL OR not_before <= ?)
			AND expires_at > ?
			ORDER BY next_attempt_at, accepted_at, id LIMIT 1`),
		statsOversize: d.rebind(oversizedDueCount),
		// The queued and the sending messages, each counted from its partial index: as many
		// entries as are in flight, where statsCounts reads one per message kept.
		inFlight: d.rebind(`SELECT (SELECT count(*) FROM messages INDEXED BY messages_due WHERE dispatch = 'queued') AS queued,
			(SELECT count(*) FROM messages INDEXED BY messages_lease WHERE dispatch = 'sending') AS sending`),
	}
}
