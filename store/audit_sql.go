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

func newAuditSQL(rebind func(string) string) auditSQL {
	return auditSQL{
		insert: rebind(`INSERT INTO audit (writer, seq, at, event, actor, message_id, outcome,
			prev_mac, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		headUpsert: rebind(`INSERT INTO audit_writers (writer, started_at, last_seq, last_mac, head_mac)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (writer) DO UPDATE SET last_seq = excluded.last_seq,
			last_mac = excluded.last_mac, head_mac = excluded.head_mac`),
		// One index seek per writer, so that listing writers never scans the journal.
		nextWriter: rebind(`SELECT writer FROM audit WHERE writer > ? ORDER BY writer LIMIT 1`),
		page: rebind(`SELECT seq, at, event, actor, message_id, outcome, prev_mac, mac FROM audit
			WHERE writer = ? AND seq > ? ORDER BY seq LIMIT ?`),
		head: rebind(`SELECT writer, started_at, last_seq, last_mac, head_mac FROM audit_writers
			WHERE writer = ?`),
		headsPage: rebind(`SELECT writer, started_at, last_seq, last_mac, head_mac FROM audit_writers
			WHERE writer > ? ORDER BY writer LIMIT ?`),
		writerAny: rebind(`SELECT count(*) FROM (SELECT 1 FROM audit WHERE writer = ? LIMIT 1) AS one`),
	}
}
