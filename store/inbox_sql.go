package store

// SQL of the peer inbox (SPEC section 7): received envelopes (peer_inbox), the idempotency
// records of inbound envelopes (peer_idempotency), each peer's payload bytes of the day
// (peer_inbox_daily, migration 0003), and making a connected peer's queued messages due. The
// other tables come from migration 0001.
//
// Dialect: everything here is portable SQL except the recipient match of makeDue, which reads
// the payload's JSON (dialect.recipientOfBody). On SQLite the body is cast to TEXT first: since
// SQLite 3.45 a BLOB argument is taken for JSONB, and payloads.body holds JSON text in a BLOB.

// inboxColumns are the columns of one inbox entry, in the order inboxRow reads them.
const inboxColumns = `id, from_peer, protocol, message_id, ts_ms, received_at, payload,
	payload_erased_at, channel, provider, to_address`

type inboxSQL struct {
	idemInsert string
	idemSelect string
	entry      string

	dailyAdd   string
	dailyPrune string

	pageSizes   string
	pageRows    string
	pageSizesOf string // pageSizes and pageRows for the entries of some providers
	pageRowsOf  string

	makeDue string

	inboundInsert string
	inboundSelect string
}

func newInboxSQL(d *dialect) inboxSQL {
	return inboxSQL{
		// The first item of (provider, provider reference) wins; a repeat changes nothing.
		inboundInsert: d.rebind(`INSERT INTO gateway_inbound (provider, provider_ref, inbox_id, received_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (provider, provider_ref) DO NOTHING`),
		inboundSelect: d.rebind(`SELECT inbox_id FROM gateway_inbound WHERE provider = ? AND provider_ref = ?`),
		// The first record of (peer, protocol, messageId, in) wins; a conflict changes nothing
		// and is then read back. Not INSERT OR IGNORE: that would hide other constraint failures.
		idemInsert: d.rebind(`INSERT INTO peer_idempotency (peer, protocol, message_id, direction,
			response, inbox_id, received_at) VALUES (?, ?, ?, 'in', ?, ?, ?)
			ON CONFLICT (peer, protocol, message_id, direction) DO NOTHING`),
		idemSelect: d.rebind(`SELECT response, inbox_id FROM peer_idempotency
			WHERE peer = ? AND protocol = ? AND message_id = ? AND direction = 'in'`),
		entry: d.rebind(`INSERT INTO peer_inbox (id, from_peer, protocol, message_id, ts_ms,
			received_at, payload_bytes, payload, channel, provider, to_address)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),

		// Adds an envelope's payload bytes (the third parameter) to its peer's count of the day
		// unless that would take it over the quota (the fourth), and returns the new count: no
		// row means over the quota. A first row of the day needs no such test: the caller
		// refuses a payload over the whole quota before asking.
		dailyAdd: d.rebind(`INSERT INTO peer_inbox_daily (day, peer, bytes) VALUES (?, ?, ?)
			ON CONFLICT (day, peer) DO UPDATE SET bytes = peer_inbox_daily.bytes + excluded.bytes
			WHERE peer_inbox_daily.bytes + excluded.bytes <= ?
			RETURNING bytes`),
		// Deletes the counts of days before the given one: only the current day is read.
		dailyPrune: d.rebind(`DELETE FROM peer_inbox_daily WHERE day < ?`),

		// Statement 1 of a page: ids and the sizes of the payloads still kept, through the
		// primary key. SQLite answers length() of a BLOB from the record header, without reading
		// the payload's overflow pages.
		pageSizes: `SELECT id, coalesce(length(payload), 0) AS bytes FROM peer_inbox
			WHERE id > ? ORDER BY id LIMIT ?`,
		pageSizesOf: `SELECT id, coalesce(length(payload), 0) AS bytes FROM peer_inbox
			WHERE id > ? AND provider IN (?) ORDER BY id LIMIT ?`,
		// Statement 2: the admitted prefix, payloads included.
		pageRows: `SELECT ` + inboxColumns + ` FROM peer_inbox
			WHERE id > ? AND id <= ? ORDER BY id`,
		pageRowsOf: `SELECT ` + inboxColumns + ` FROM peer_inbox
			WHERE id > ? AND id <= ? AND provider IN (?) ORDER BY id`,

		// Makes at most a chunk of one recipient's waiting peer messages due. It walks the queue
		// index over the messages not yet due (next_attempt_at > now), so messages already due,
		// claimed or final are never read; a message held by notBefore stays held. The outer
		// statement names no other condition, so that it finds the rows by their row id (the
		// subquery runs in the same statement, so nothing moves in between).
		makeDue: d.rebind(`UPDATE messages SET next_attempt_at = ? WHERE seq IN (
			SELECT m.seq FROM messages AS m INDEXED BY messages_due
			JOIN payloads AS p ON p.message_seq = m.seq
			WHERE m.dispatch = 'queued' AND m.next_attempt_at > ? AND m.channel = 'peer'
			AND (m.not_before IS NULL OR m.not_before <= ?)
			AND ` + d.recipientOfBody + ` = ?
			LIMIT ?)`),
	}
}
