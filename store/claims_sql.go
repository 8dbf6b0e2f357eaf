package store

// SQL of claims and leases. A message is due when
//
//	dispatch = 'queued' AND next_attempt_at <= now AND (not_before IS NULL OR not_before <= now)
//
// and it has not expired (expires_at > now): an expired message is never claimed, it waits for
// the expiry sweep. The queue's statements name their index (INDEXED BY, SQLite's): the partial
// queue indexes are far smaller than the dispatch prefix of messages_size, but without
// statistics the planner prefers an equality on dispatch, and a query that cannot use the
// named index fails to prepare instead of silently scanning.

// oversizedDueCount counts due messages larger than a byte budget (the first parameter).
const oversizedDueCount = `SELECT count(*) FROM messages INDEXED BY messages_size
	WHERE dispatch = 'queued' AND payload_bytes > ? AND next_attempt_at <= ?
	AND (not_before IS NULL OR not_before <= ?) AND expires_at > ?`

type claimSQL struct {
	dueSelect      string
	oversizedCount string
	claimUpdate    string
	loadPayloads   string
	renew          string
	lapsed         string
	finishAttempt  string
	finishUpdate   string
	// finishFolded, set on PostgreSQL only (dialect.foldWrites), is finishAttempt,
	// finishUpdate and the audit insert as one statement: one round trip instead of three.
	finishFolded string
	// finishMany is finishFolded over arrays, for the finishes a pipeline runs as one
	// statement (pipeline_many.go); PostgreSQL only.
	finishMany string
}

func newClaimSQL(d *dialect) claimSQL {
	q := claimSQL{
		// Statement 1 of a claim: the due metadata that fits the budget, in claim order, with the
		// oversized count as one aggregate evaluated once. The budget reads payload_bytes + 0 so
		// that PostgreSQL's planner walks messages_due in claim order: without statistics it took
		// the smaller messages_size for the budget and sorted every due message (5 ms a claim
		// at 2,000 queued, against 0.5 ms).
		dueSelect: d.rebind(`SELECT ` + messageColumns + `, (` + oversizedDueCount + `) AS oversized
			FROM messages INDEXED BY messages_due
			WHERE dispatch = 'queued' AND next_attempt_at <= ? AND (not_before IS NULL OR not_before <= ?)
			AND expires_at > ? AND payload_bytes + 0 <= ?
			ORDER BY next_attempt_at, accepted_at, id LIMIT ?` + d.lockDue),
		// Run instead of statement 2 when nothing is due within the budget.
		oversizedCount: d.rebind(oversizedDueCount),
		// Statement 2: the admitted prefix moves to sending under the page's lease token. The
		// rows are found by their row ids; the state guard compares dispatch joined to the
		// empty string, so that no index on dispatch can serve it. As a plain equality SQLite
		// walked messages_size's entries for every queued message and filtered them by the
		// list (the padded list of 128 ids looked dearer to its planner than "dispatch = ?"),
		// so the claim cost grew with the queue: 24 µs a claimed message in a 50,000-message
		// burst, 8 by row id (docs/benchmarks-history.md). PostgreSQL with lagging statistics did the
		// same through its partial messages_size.
		claimUpdate: `UPDATE messages SET dispatch = 'sending', event_seq = event_seq + 1, lease_token = ?, lease_expires_at = ?,
			sending_since = ?, attempt = attempt + 1, updated_at = ?
			WHERE seq IN (?) AND dispatch || '' = 'queued'`,
		// Statement 3: the admitted payloads, in any order (restored in memory).
		loadPayloads: `SELECT message_seq, body FROM payloads WHERE message_seq IN (?)`,
		renew: d.rebind(`UPDATE messages SET lease_expires_at = ?
			WHERE id = ? AND dispatch = 'sending' AND lease_token = ?`),
		lapsed: d.rebind(`SELECT ` + messageColumns + ` FROM messages INDEXED BY messages_lease
			WHERE dispatch = 'sending' AND lease_expires_at < ?
			ORDER BY lease_expires_at, id LIMIT ?`),
		// Finish closes the in-progress attempt from the row itself, fenced by the lease token:
		// with a stale token it inserts nothing. Two instances recovering one lapsed lease at
		// once both find the token (PostgreSQL reads without locking); the second's insert then
		// meets the first's row and inserts nothing either: its lease is lost.
		finishAttempt: d.rebind(`INSERT INTO attempts (message_id, generation, attempt, provider,
			outcome, started_at, finished_at, code, provider_ref)
			SELECT id, generation, attempt, provider, CAST(? AS TEXT), coalesce(sending_since, CAST(? AS BIGINT)),
			CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT)
			FROM messages WHERE id = ? AND dispatch = 'sending' AND lease_token = ?
			ON CONFLICT (message_id, generation, attempt) DO NOTHING`),
		// The transition the engine decided; reported_at moves when the report does. It answers
		// how many receipts are kept for the reference the message holds after it (the last
		// parameter): nearly always none, and only then does the finish read them, a statement
		// fewer per finish. Run on SQLite only (finishFolded is PostgreSQL's).
		finishUpdate: d.rebind(`UPDATE messages SET dispatch = ?, report = ?, event_seq = event_seq + 1,
			reported_at = CASE WHEN report <> ? AND ? IN ('sent', 'delivered', 'undelivered') THEN ? ELSE reported_at END,
			next_attempt_at = coalesce(?, next_attempt_at), provider_attempts = ?, fallback_index = ?,
			provider = coalesce(?, provider), provider_ref = coalesce(?, provider_ref),
			dispatch_code = ?, reason_code = ?, reason_by = ?, final_at = ?,
			last_outcome_class = coalesce(?, last_outcome_class),
			updated_at = ?, lease_token = NULL, lease_expires_at = NULL, sending_since = NULL
			WHERE id = ? AND dispatch = 'sending' AND lease_token = ?
			RETURNING (SELECT count(*) FROM receipts WHERE provider = messages.provider AND provider_ref = ? AND applied = 0)`),
	}
	if d.foldWrites {
		q.finishFolded = d.rebind(finishFolded)
		q.finishMany = d.rebind(finishMany())
	}
	return q
}

// finishFolded closes the attempt (a), applies the transition to the message whose attempt it
// closed (u) and journals it (j), in one statement on PostgreSQL, whose data-modifying WITH
// parts each run once whether or not the answer reads them. It answers how many attempts it
// closed and how many messages it updated: 0 closed is a lost lease, with nothing written;
// 1 closed and 0 updated means the row changed under its lease. It also counts the receipts
// kept for the reference the finish records (pending), nearly always none: only then does the
// finish read them, which saves a round trip per finish. The parameters are finishAttempt's,
// then finishUpdate's less the id, then the audit record's, then the reference (NULL for none),
// the provider the finish sets (NULL to keep the message's) and the message id.
//
// The state guards compare dispatch joined to the empty string, so that no index on dispatch
// can serve them and the message is found by its id. Measured with auto_explain over 20,000
// messages on a queue whose statistics lag (autovacuum off, or a queue growing faster than it
// is analyzed): the planner estimated one 'sending' row, found the messages in flight through
// messages_lease or the dispatch index and filtered them by id, reading every message in flight
// and the dead entries of those before them (137 buffers a finish, 160 µs of database time),
// where the id lookup reads a handful. The update names the closed attempt's message as a
// scalar (a holds at most one row; none gives NULL, which matches nothing) for the same reason:
// as `id IN (SELECT …)` the planner joined a with a scan of the table.
const finishFolded = `WITH a AS (
	INSERT INTO attempts (message_id, generation, attempt, provider, outcome, started_at,
		finished_at, code, provider_ref)
	SELECT id, generation, attempt, provider, CAST(? AS TEXT), coalesce(sending_since, CAST(? AS BIGINT)),
		CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT)
	FROM messages WHERE id = ? AND dispatch || '' = 'sending' AND lease_token = ?
	ON CONFLICT (message_id, generation, attempt) DO NOTHING
	RETURNING message_id
), u AS (
	UPDATE messages SET dispatch = CAST(? AS TEXT), report = CAST(? AS TEXT), event_seq = event_seq + 1,
		reported_at = CASE WHEN report <> CAST(? AS TEXT) AND CAST(? AS TEXT) IN ('sent', 'delivered', 'undelivered')
			THEN CAST(? AS BIGINT) ELSE reported_at END,
		next_attempt_at = coalesce(CAST(? AS BIGINT), next_attempt_at), provider_attempts = CAST(? AS BIGINT),
		fallback_index = CAST(? AS BIGINT), provider = coalesce(CAST(? AS TEXT), provider),
		provider_ref = coalesce(CAST(? AS TEXT), provider_ref), dispatch_code = CAST(? AS TEXT),
		reason_code = CAST(? AS TEXT), reason_by = CAST(? AS TEXT), final_at = CAST(? AS BIGINT), last_outcome_class = coalesce(CAST(? AS TEXT), last_outcome_class),
		updated_at = CAST(? AS BIGINT), lease_token = NULL, lease_expires_at = NULL, sending_since = NULL
	WHERE id = (SELECT message_id FROM a) AND dispatch || '' = 'sending' AND lease_token = CAST(? AS TEXT)
	RETURNING id
)` + journalUpdated + `
SELECT (SELECT count(*) FROM a) AS closed, (SELECT count(*) FROM u) AS updated,
	(SELECT count(*) FROM receipts WHERE provider_ref = CAST(? AS TEXT) AND applied = 0
		AND provider = coalesce(CAST(? AS TEXT), (SELECT provider FROM messages WHERE id = CAST(? AS TEXT)))) AS pending`
