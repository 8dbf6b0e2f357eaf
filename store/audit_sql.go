package store

// SQL of the audit journal and its chain heads.

type auditSQL struct {
	insert     string
	headUpsert string
	nextWriter string
	page       string
	head       string
	headsPage  string
	writerAny  string
}

func newAuditSQL(d *dialect) auditSQL {
	return auditSQL{
		insert: d.rebind(`INSERT INTO audit (writer, seq, at, event, actor, message_id, outcome,
			prev_mac, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		headUpsert: d.rebind(`INSERT INTO audit_writers (writer, started_at, last_seq, last_mac, head_mac)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (writer) DO UPDATE SET last_seq = excluded.last_seq,
			last_mac = excluded.last_mac, head_mac = excluded.head_mac`),
		// One index seek per writer, so that listing writers never scans the journal.
		nextWriter: d.rebind(`SELECT writer FROM audit WHERE writer > ? ORDER BY writer LIMIT 1`),
		page: d.rebind(`SELECT seq, at, event, actor, message_id, outcome, prev_mac, mac FROM audit
			WHERE writer = ? AND seq > ? ORDER BY seq LIMIT ?`),
		head: d.rebind(`SELECT writer, started_at, last_seq, last_mac, head_mac FROM audit_writers
			WHERE writer = ?`),
		headsPage: d.rebind(`SELECT writer, started_at, last_seq, last_mac, head_mac FROM audit_writers
			WHERE writer > ? ORDER BY writer LIMIT ?`),
		writerAny: d.rebind(`SELECT count(*) FROM (SELECT 1 FROM audit WHERE writer = ? LIMIT 1) AS one`),
	}
}

// journalUpdated ends a folded write (PostgreSQL, dialect.foldWrites) whose WITH part u updated
// a message: the part j inserts the audit record, whose nine parameters (as auditRow returns
// them) come last, only when u updated a row.
const journalUpdated = `, j AS (
	INSERT INTO audit (writer, seq, at, event, actor, message_id, outcome, prev_mac, mac)
	SELECT CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT),
		CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BYTEA), CAST(? AS BYTEA)
	FROM u
)`
