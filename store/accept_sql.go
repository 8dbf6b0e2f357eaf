package store

// SQL of acceptance: idempotency records and the daily counters of access profiles.

type acceptSQL struct {
	idemInsert       string
	idemSelect       string
	idemOwner        string
	idemDelete       string
	dailyCount       string
	dailyCountLocked string
	dailyUpsert      string
	// idemFolded and acceptFolded, set on PostgreSQL only (dialect.foldWrites), write a batch's
	// acceptances in two statements (accept_folded.go).
	idemFolded, acceptFolded string
}

func newAcceptSQL(d *dialect) acceptSQL {
	q := acceptSQL{
		// The first acceptance of a key wins; a conflict changes nothing and is then read back.
		idemInsert: d.rebind(`INSERT INTO idempotency (issuer, subject, key, request_hash, response,
			message_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (issuer, subject, key) DO NOTHING`),
		idemSelect: d.rebind(`SELECT request_hash, response, message_id, expires_at FROM idempotency
			WHERE issuer = ? AND subject = ? AND key = ?`),
		// The message a key's record names: after a multi-row insert met a conflict, a record
		// is the batch's own when it names the acceptance's message.
		idemOwner: d.rebind(`SELECT message_id FROM idempotency WHERE issuer = ? AND subject = ? AND key = ?`),
		// Undoes the record of an acceptance refused after it was inserted (the daily limit),
		// so that the fast path needs no savepoint.
		idemDelete: d.rebind(`DELETE FROM idempotency WHERE issuer = ? AND subject = ? AND key = ?`),
		// Read once per profile and day in a batch.
		dailyCount:       d.rebind(d.dailyRead),
		dailyCountLocked: d.rebind(d.dailyLockedRead),
		// Adds a batch's acceptances (the third parameter) to the stored count, and returns the
		// new count.
		dailyUpsert: d.rebind(`INSERT INTO profile_daily (access_profile, day, count) VALUES (?, ?, ?)
			ON CONFLICT (access_profile, day) DO UPDATE SET count = profile_daily.count + excluded.count
			RETURNING count`),
	}
	if d.foldWrites {
		q.idemFolded, q.acceptFolded = foldedAcceptSQL()
	}
	return q
}
