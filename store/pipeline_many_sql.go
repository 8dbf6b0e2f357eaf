package store

import "strings"

// SQL of the multi-row forms of the pipelined statements (PostgreSQL, pipeline_many.go). Each
// takes one array per parameter of its single form, in the same order, and answers one row per
// element, in element order, with the single form's answer columns.

// manyInput is the WITH part i of a multi-row statement: the arrays as rows, one column per
// array ("name TYPE", in parameter order), and n, the element's position.
func manyInput(cols ...string) string {
	arrays := make([]string, len(cols))
	names := make([]string, len(cols))
	for k, c := range cols {
		name, typ, _ := strings.Cut(c, " ")
		arrays[k] = `CAST(? AS ` + typ + `[])`
		names[k] = name
	}
	return `i AS (
	SELECT * FROM unnest(` + strings.Join(arrays, ", ") + `) WITH ORDINALITY AS t(` + strings.Join(names, ", ") + `, n)
)`
}

// auditInput are the columns of an audit record in a multi-row input, as auditRow orders
// them; journalMany inserts them for the rows that the part u updated.
func auditInput() []string {
	return []string{"a_writer TEXT", "a_seq BIGINT", "a_at BIGINT", "a_event TEXT", "a_actor TEXT",
		"a_message_id TEXT", "a_outcome TEXT", "a_prev_mac BYTEA", "a_mac BYTEA"}
}

// journalMany is journalUpdated for a multi-row statement: the audit record of each message
// that u updated.
const journalMany = `, j AS (
	INSERT INTO audit (writer, seq, at, event, actor, message_id, outcome, prev_mac, mac)
	SELECT i.a_writer, i.a_seq, i.a_at, i.a_event, i.a_actor, i.a_message_id, i.a_outcome, i.a_prev_mac, i.a_mac
	FROM i JOIN u ON u.id = i.id
)`

// finishMany is finishFolded over arrays. Its columns follow finishFolded's parameters: those
// of finishAttempt, those of finishUpdate less the id, the lease token, the audit record, and
// the reference, provider and id the count of kept receipts reads. The state guards compare
// dispatch joined to the empty string, as finishFolded's do.
func finishMany() string {
	cols := append([]string{
		"outcome TEXT", "started_default BIGINT", "finished_at BIGINT", "code TEXT", "attempt_ref TEXT",
		"id TEXT", "token TEXT",
		"dispatch TEXT", "report TEXT", "report_was TEXT", "report_to TEXT", "reported_at BIGINT",
		"next_attempt_at BIGINT", "provider_attempts BIGINT", "fallback_index BIGINT", "provider TEXT",
		"provider_ref TEXT", "dispatch_code TEXT", "reason_code TEXT", "reason_by TEXT", "final_at BIGINT",
		"outcome_class TEXT", "updated_at BIGINT", "lease_token TEXT",
	}, auditInput()...)
	cols = append(cols, "pending_ref TEXT", "pending_provider TEXT", "message_id TEXT")
	return `WITH ` + manyInput(cols...) + `, a AS (
	INSERT INTO attempts (message_id, generation, attempt, provider, outcome, started_at,
		finished_at, code, provider_ref)
	SELECT m.id, m.generation, m.attempt, m.provider, i.outcome, coalesce(m.sending_since, i.started_default),
		i.finished_at, i.code, i.attempt_ref
	FROM i JOIN messages AS m ON m.id = i.id
	WHERE m.dispatch || '' = 'sending' AND m.lease_token = i.token
	ON CONFLICT (message_id, generation, attempt) DO NOTHING
	RETURNING message_id
), u AS (
	UPDATE messages AS m SET dispatch = i.dispatch, report = i.report, event_seq = m.event_seq + 1,
		reported_at = CASE WHEN m.report <> i.report_was AND i.report_to IN ('sent', 'delivered', 'undelivered')
			THEN i.reported_at ELSE m.reported_at END,
		next_attempt_at = coalesce(i.next_attempt_at, m.next_attempt_at), provider_attempts = i.provider_attempts,
		fallback_index = i.fallback_index, provider = coalesce(i.provider, m.provider),
		provider_ref = coalesce(i.provider_ref, m.provider_ref), dispatch_code = i.dispatch_code,
		reason_code = i.reason_code, reason_by = i.reason_by, final_at = i.final_at,
		last_outcome_class = coalesce(i.outcome_class, m.last_outcome_class),
		updated_at = i.updated_at, lease_token = NULL, lease_expires_at = NULL, sending_since = NULL
	FROM i JOIN a ON a.message_id = i.id
	WHERE m.id = i.id AND m.dispatch || '' = 'sending' AND m.lease_token = i.lease_token
	RETURNING m.id
)` + journalMany + `
SELECT CASE WHEN a.message_id IS NULL THEN 0 ELSE 1 END AS closed,
	CASE WHEN u.id IS NULL THEN 0 ELSE 1 END AS updated,
	(SELECT count(*) FROM receipts AS r WHERE r.provider_ref = i.pending_ref AND r.applied = 0
		AND r.provider = coalesce(i.pending_provider, (SELECT provider FROM messages WHERE id = i.message_id))) AS pending
FROM i LEFT JOIN a ON a.message_id = i.id LEFT JOIN u ON u.id = i.id
ORDER BY i.n`
}

// applyMany is applyJournaled[to] over arrays: the receipts' reports moved to to, each only
// from one that to is a step forward from (guard), answering for each whether it moved.
func applyMany(to, guard string) string {
	cols := append([]string{"reported_at BIGINT", "updated_at BIGINT", "reason_code TEXT", "reason_by TEXT", "id TEXT"},
		auditInput()...)
	return `WITH ` + manyInput(cols...) + `, u AS (
	UPDATE messages AS m SET report = '` + to + `', event_seq = m.event_seq + 1, reported_at = i.reported_at,
		updated_at = i.updated_at, reason_code = i.reason_code, reason_by = i.reason_by
	FROM i WHERE m.id = i.id AND m.` + guard + `
	RETURNING m.id
)` + journalMany + `
SELECT CASE WHEN u.id IS NULL THEN 0 ELSE 1 END AS moved
FROM i LEFT JOIN u ON u.id = i.id
ORDER BY i.n`
}
