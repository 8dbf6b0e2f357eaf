package store

// SQL of the event outbox (webhook_events, migration 0005). A row is due when
//
//	state = 'pending' AND next_attempt_at <= now
//
// and a claim sets next_attempt_at to its lease's expiry, so rows in flight are not due until
// their lease lapses, and a lapsed lease needs no recovery: the row is due again.

// eventColumns are the columns an eventRow scans.
const eventColumns = `id, endpoint, type, subject, sequence, state, changed_at, attempts, next_attempt_at,
	lease_token, delivered_sequence, delivered_at, last_attempt_at, last_status, last_error`

type eventSQL struct {
	upsertMessages string
	insertInbox    string
	upsertDevice   string

	due         string
	lease       string
	renew       string
	delivered   string
	undelivered string

	messagesByID string
	attemptsByID string
	inboxByID    string

	list              string
	listByEndpoint    string
	listByState       string
	listByBoth        string
	figures           string
	failingSince      string
	redeliverable     string
	redeliverSelect   string
	redeliverUpdate   string
	erasableCount     string
	eraseSelect       string
	eraseDelete       string
	pendingByEndpoint string
}

func newEventSQL(d *dialect) eventSQL {
	return eventSQL{
		// One row per endpoint and message of the batch's changes, for the messages of the
		// endpoint's access profiles. An undelivered row keeps its place in the retry schedule
		// and takes the newer sequence (superseding); a delivered or failed one starts afresh.
		// The parameters: endpoint, changed_at, next_attempt_at, the ids, the access profiles.
		upsertMessages: `INSERT INTO webhook_events (endpoint, type, subject, sequence, state, changed_at,
			attempts, next_attempt_at)
			SELECT CAST(? AS TEXT), 'message.status', id, event_seq, 'pending', CAST(? AS BIGINT), 0, CAST(? AS BIGINT)
			FROM messages WHERE id IN (?) AND access_profile IN (?)
			ON CONFLICT (endpoint, type, subject) DO UPDATE SET
				sequence = excluded.sequence, changed_at = excluded.changed_at,
				attempts = CASE WHEN webhook_events.state = 'pending' THEN webhook_events.attempts ELSE 0 END,
				next_attempt_at = CASE WHEN webhook_events.state = 'pending' THEN webhook_events.next_attempt_at
					ELSE excluded.next_attempt_at END,
				state = 'pending', final_at = NULL`,
		insertInbox: d.rebind(`INSERT INTO webhook_events (endpoint, type, subject, sequence, state, changed_at,
			attempts, next_attempt_at) VALUES (?, 'inbox.received', ?, 1, 'pending', ?, 0, ?)
			ON CONFLICT (endpoint, type, subject) DO NOTHING`),

		// One device.unregistered row for the message when it is of one of the endpoint's access
		// profiles, carrying its data; a second one of the message (a later generation) takes the
		// row's place as a newer message.status change does. Parameters: endpoint, changed_at,
		// next_attempt_at, data, the id, the access profiles.
		upsertDevice: `INSERT INTO webhook_events (endpoint, type, subject, sequence, state, changed_at,
			attempts, next_attempt_at, data)
			SELECT CAST(? AS TEXT), 'device.unregistered', id, event_seq, 'pending', CAST(? AS BIGINT), 0,
				CAST(? AS BIGINT), CAST(? AS TEXT)
			FROM messages WHERE id IN (?) AND access_profile IN (?)
			ON CONFLICT (endpoint, type, subject) DO UPDATE SET
				sequence = excluded.sequence, changed_at = excluded.changed_at, data = excluded.data,
				attempts = CASE WHEN webhook_events.state = 'pending' THEN webhook_events.attempts ELSE 0 END,
				next_attempt_at = CASE WHEN webhook_events.state = 'pending' THEN webhook_events.next_attempt_at
					ELSE excluded.next_attempt_at END,
				state = 'pending', final_at = NULL`,

		due: d.rebind(`SELECT id, endpoint, type, subject, sequence, attempts, changed_at, data FROM webhook_events
			WHERE endpoint = ? AND state = 'pending' AND next_attempt_at <= ?
			ORDER BY next_attempt_at, id LIMIT ?` + d.lockEvents),
		lease: `UPDATE webhook_events SET lease_token = ?, next_attempt_at = ?
			WHERE state = 'pending' AND id IN (?)`,
		renew: d.rebind(`UPDATE webhook_events SET next_attempt_at = ?
			WHERE id = ? AND lease_token = ? AND state = 'pending'`),
		// A delivered attempt: the row is delivered unless a newer change arrived meanwhile,
		// which is then due at once with no attempt yet. Parameters: at, status, sequence (sent),
		// at, then sequence four times, at twice, id and token.
		delivered: d.rebind(`UPDATE webhook_events SET last_attempt_at = CAST(? AS BIGINT),
			last_status = CAST(? AS BIGINT), last_error = '',
			delivered_sequence = CAST(? AS BIGINT), delivered_at = CAST(? AS BIGINT), lease_token = NULL,
			attempts = CASE WHEN sequence > CAST(? AS BIGINT) THEN 0 ELSE attempts + 1 END,
			state = CASE WHEN sequence > CAST(? AS BIGINT) THEN 'pending' ELSE 'delivered' END,
			final_at = CASE WHEN sequence > CAST(? AS BIGINT) THEN NULL ELSE CAST(? AS BIGINT) END,
			next_attempt_at = CAST(? AS BIGINT)
			WHERE id = ? AND lease_token = ?`),
		// An undelivered attempt: due again at next_attempt_at, or failed when the schedule is
		// spent (a newer change keeps the row pending). Parameters: at, status, error, give up
		// (0 or 1), sequence, give up, sequence, at, next, id, token.
		undelivered: d.rebind(`UPDATE webhook_events SET last_attempt_at = CAST(? AS BIGINT),
			last_status = CAST(? AS BIGINT), last_error = CAST(? AS TEXT),
			lease_token = NULL, attempts = attempts + 1,
			state = CASE WHEN CAST(? AS BIGINT) = 1 AND sequence <= CAST(? AS BIGINT) THEN 'failed' ELSE 'pending' END,
			final_at = CASE WHEN CAST(? AS BIGINT) = 1 AND sequence <= CAST(? AS BIGINT) THEN CAST(? AS BIGINT) ELSE NULL END,
			next_attempt_at = CAST(? AS BIGINT)
			WHERE id = ? AND lease_token = ?`),

		messagesByID: `SELECT ` + messageColumns + ` FROM messages WHERE id IN (?)`,
		attemptsByID: `SELECT message_id, ` + attemptColumns + ` FROM attempts WHERE message_id IN (?)
			ORDER BY message_id, generation, attempt`,
		inboxByID: `SELECT ` + inboxColumns + ` FROM peer_inbox WHERE id IN (?)`,

		list:           d.rebind(`SELECT ` + eventColumns + ` FROM webhook_events ORDER BY changed_at DESC, id DESC LIMIT ?`),
		listByEndpoint: d.rebind(`SELECT ` + eventColumns + ` FROM webhook_events WHERE endpoint = ? ORDER BY changed_at DESC, id DESC LIMIT ?`),
		listByState:    d.rebind(`SELECT ` + eventColumns + ` FROM webhook_events WHERE state = ? ORDER BY changed_at DESC, id DESC LIMIT ?`),
		listByBoth: d.rebind(`SELECT ` + eventColumns + ` FROM webhook_events WHERE endpoint = ? AND state = ?
			ORDER BY changed_at DESC, id DESC LIMIT ?`),
		figures: d.rebind(`SELECT endpoint,
			coalesce(sum(CASE WHEN state = 'pending' THEN 1 ELSE 0 END), 0) AS pending,
			coalesce(sum(CASE WHEN state = 'failed' THEN 1 ELSE 0 END), 0) AS failed,
			min(CASE WHEN state = 'pending' THEN changed_at END) AS oldest_pending,
			max(delivered_at) AS last_success
			FROM webhook_events GROUP BY endpoint`),
		// The oldest pending row of each endpoint that failed at least once, with when that row
		// was last tried.
		failingSince: d.rebind(`SELECT endpoint, min(changed_at) AS since, max(last_attempt_at) AS tried
			FROM webhook_events WHERE state = 'pending' AND attempts > 0 GROUP BY endpoint`),
		pendingByEndpoint: d.rebind(`SELECT endpoint, count(*) AS n FROM webhook_events
			WHERE state = 'pending' GROUP BY endpoint`),
		redeliverable: d.rebind(`SELECT count(*) FROM webhook_events
			WHERE endpoint = ? AND changed_at >= ? AND state <> 'pending'`),
		redeliverSelect: d.rebind(`SELECT id FROM webhook_events
			WHERE endpoint = ? AND changed_at >= ? AND state <> 'pending' ORDER BY id LIMIT ?`),
		redeliverUpdate: `UPDATE webhook_events SET state = 'pending', attempts = 0, next_attempt_at = ?,
			final_at = NULL WHERE state <> 'pending' AND id IN (?)`,
		erasableCount: d.rebind(`SELECT count(*) FROM webhook_events INDEXED BY webhook_events_final
			WHERE state <> 'pending' AND final_at <= ?`),
		eraseSelect: d.rebind(`SELECT id FROM webhook_events INDEXED BY webhook_events_final
			WHERE state <> 'pending' AND final_at <= ? ORDER BY final_at LIMIT ?`),
		eraseDelete: `DELETE FROM webhook_events WHERE state <> 'pending' AND id IN (?)`,
	}
}
