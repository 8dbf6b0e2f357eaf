package store

import (
	"fmt"
	"strings"
)

// Folded acceptance (PostgreSQL). The chunked multi-row statements of the fast path cost one
// round trip each, and a batch of 21 acceptances took 16 + 4 + 1 rows, three statements, for
// each of idempotency, messages, payloads and audit: twelve round trips, each waiting for the
// database and the writer to be scheduled again. On PostgreSQL each column goes as one array
// parameter and the rows are unnested on the server, so one statement takes any number of rows:
// one for the idempotency records, and one that inserts the messages, their payloads (keyed by
// the row ids the message insert returns) and their audit records together.

// foldedAcceptSQL returns the two statements of a folded acceptance: the idempotency records,
// and the messages, then their payloads by the ids the message insert returns, and the audit
// records, counting the payloads inserted. Each column is one array parameter, cast to its
// column's type (in the order of the column lists of accept_multi.go). The second takes the
// message columns, then the audit columns, then the payloads' message ids and bodies.
func foldedAcceptSQL() (idem, accept string) {
	idemTypes := []string{"text", "text", "text", "bytea", "bytea", "text", "bigint", "bigint"}
	messageTypes := []string{"text", "text", "text", "bigint", "text", "text", "text", "text", "text", "text", "text",
		"text", "text", "text", "text", "bigint", "bigint", "bigint", "bigint", "bigint", "bigint", "bigint", "bigint",
		"bigint", "bigint", "bigint", "text", "text", "text"}
	auditTypes := []string{"text", "bigint", "bigint", "text", "text", "text", "text", "bytea", "bytea"}
	idem = idemInsertHead + " " + unnested(idemTypes) + " " + idemInsertTail
	accept = `WITH m AS (` + msgInsertHead + ` ` + unnested(messageTypes) + ` RETURNING id, seq),
	a AS (` + auditInsertHead + ` ` + unnested(auditTypes) + `),
	p AS (` + payloadInsertHead + ` SELECT m.seq, b.body FROM m
		JOIN unnest(CAST(? AS text[]), CAST(? AS bytea[])) AS b(id, body) ON m.id = b.id COLLATE "C"
		RETURNING 1)
	SELECT count(*) FROM p`
	return idem, accept
}

// unnested is `SELECT * FROM unnest(CAST(? AS t1[]), …)` for columns of types.
func unnested(types []string) string {
	casts := make([]string, len(types))
	for i, t := range types {
		casts[i] = "CAST(? AS " + t + "[])"
	}
	return "SELECT * FROM unnest(" + strings.Join(casts, ", ") + ")"
}

// arrays turns rows of equal length into one array per column.
func arrays(rows [][]any) []any {
	if len(rows) == 0 {
		return nil
	}
	n := len(rows[0])
	cols := make([]any, n)
	for c := range n {
		col := make([]any, len(rows))
		for r, row := range rows {
			col[r] = row[c]
		}
		cols[c] = col
	}
	return cols
}

// insertAcceptedFolded writes the messages, payloads and audit records of fresh with one
// statement.
func (b *batch) insertAcceptedFolded(fresh []pendingAccept) error {
	if len(fresh) == 0 {
		return nil
	}
	messages := make([][]any, len(fresh))
	ids := make([]any, len(fresh))
	bodies := make([]any, len(fresh))
	for i, p := range fresh {
		messages[i], ids[i], bodies[i] = p.it.message, p.it.id, p.it.payload
	}
	audit, chain := b.auditRows(fresh)
	args := append(arrays(messages), arrays(audit)...)
	args = append(args, ids, bodies)
	var n int
	if err := b.get(&n, b.s.q.accept.acceptFolded, args...); err != nil {
		return fmt.Errorf("store: accept: messages, payloads and audit records: %w", err)
	}
	if n != len(fresh) {
		return fmt.Errorf("store: accept: %d payloads stored for %d messages", n, len(fresh))
	}
	b.chain = chain
	return nil
}
