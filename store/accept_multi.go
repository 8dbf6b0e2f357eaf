package store

import (
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"switchboard/engine"
)

// Multi-row acceptance: the writer's fast path. Each acceptance costs several statements, and
// each statement is a cgo call after which the writer goroutine must win a scheduler slot again
// among every HTTP goroutine; under load that wait, not SQLite, bounded the accept rate. On the
// fast path the acceptances of a batch are gathered and written with one multi-row statement per
// table (chunked into a few fixed row counts so that the statements stay prepared). Any failure
// poisons the batch, which the writer then runs again one acceptance at a time with savepoints.

// pendingAccept is one acceptance gathered by the fast path, with where its answer goes.
type pendingAccept struct {
	it  *acceptItem
	res *engine.AcceptResult
}

// splitRows cuts n rows into chunks of the row counts multi-row statements are prepared for
// (64, 16, 4 and 1), largest first.
func splitRows(n int) []int {
	var out []int
	for _, c := range [...]int{64, 16, 4, 1} {
		for n >= c {
			out = append(out, c)
			n -= c
		}
	}
	return out
}

// multiRow builds `head VALUES (?, …), … tail` for rows rows of cols columns.
func multiRow(head string, cols, rows int, tail string) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return head + " VALUES " + strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ") + " " + tail
}

const (
	idemInsertHead = `INSERT INTO idempotency (issuer, subject, key, request_hash, response, message_id, created_at, expires_at)`
	idemInsertTail = `ON CONFLICT (issuer, subject, key) DO NOTHING`
	msgInsertHead  = `INSERT INTO messages (id, dispatch, report, reported_at, channel,
			sender_profile, provider, provider_ref, recipient_kind, template_id, template_version,
			locale, correlation_id, access_profile, caller, accepted_at, not_before, expires_at,
			updated_at, next_attempt_at, generation, attempt, provider_attempts, fallback_index,
			payload_bytes, final_at, dispatch_code, idempotency_key, last_outcome_class)`
	msgInsertTail     = `RETURNING id, seq`
	payloadInsertHead = `INSERT INTO payloads (message_seq, body)`
	auditInsertHead   = `INSERT INTO audit (writer, seq, at, event, actor, message_id, outcome, prev_mac, mac)`
)

// idemKey identifies an idempotency record.
type idemKey struct{ issuer, subject, key string }

// flushAccepts writes every gathered acceptance. On failure it poisons the batch.
func (b *batch) flushAccepts() error {
	pend := b.pending
	b.pending = nil
	if len(pend) == 0 || b.poison != nil {
		return b.poison
	}
	if err := b.writeAccepts(pend); err != nil {
		b.s.log.Debug("store: fast accept path failed; the batch runs again with savepoints", "err", err)
		b.poison = errSlowPath
		return b.poison
	}
	return nil
}

func (b *batch) writeAccepts(pend []pendingAccept) error {
	inserted, err := b.insertIdempotency(pend)
	if err != nil {
		return err
	}
	fresh := make([]pendingAccept, 0, len(pend))
	claimed := map[idemKey]bool{}
	for _, p := range pend {
		it := p.it
		k := idemKey{it.idem.Issuer, it.idem.Subject, it.idem.Key}
		if it.idem.Key != "" && (!inserted[k] || claimed[k]) {
			res, err := b.resolveKey(it)
			if err != nil && !cleanAcceptRefusal(err) {
				return err
			}
			if err != nil {
				res = engine.AcceptResult{Err: err}
			}
			*p.res = res
			continue
		}
		claimed[k] = true
		count, err := b.dailyCount(it.daily, it.limit)
		if err != nil {
			return err
		}
		if it.limit > 0 && count >= int64(it.limit) {
			if it.idem.Key != "" {
				if err := b.execCached(b.s.q.accept.idemDelete, it.idem.Issuer, it.idem.Subject, it.idem.Key); err != nil {
					return fmt.Errorf("store: accept %s: undo idempotency record: %w", it.id, err)
				}
				delete(claimed, k)
			}
			*p.res = engine.AcceptResult{Err: engine.ErrQuotaExceeded}
			continue
		}
		b.countDaily(it.daily)
		fresh = append(fresh, p)
	}
	if b.s.d.foldWrites {
		if err := b.insertAcceptedFolded(fresh); err != nil {
			return err
		}
	} else {
		if err := b.insertMessagesAndPayloads(fresh); err != nil {
			return err
		}
		if err := b.auditMany(fresh); err != nil {
			return err
		}
	}
	for _, p := range fresh {
		*p.res = engine.AcceptResult{Response: p.it.idem.Response, MessageID: p.it.id}
		b.messageChanged(p.it.id)
	}
	return nil
}

// insertIdempotency inserts the records of every acceptance with a key; a key already spent
// (before this batch, or by an earlier acceptance of it) is left alone and not returned. The
// insert returns no rows: when it changed as many rows as it was given, every key is new (the
// usual case), and only when some conflicted are the records read back, a record being this
// batch's when it names the acceptance's message. A RETURNING clause cost about a fifth of
// an acceptance's writer time.
func (b *batch) insertIdempotency(pend []pendingAccept) (map[idemKey]bool, error) {
	var rows [][]any
	keyed := make([]*acceptItem, 0, len(pend))
	for _, p := range pend {
		it := p.it
		if it.idem.Key != "" {
			rows = append(rows, []any{it.idem.Issuer, it.idem.Subject, it.idem.Key, it.idem.RequestHash,
				it.idem.Response, it.id, ms(it.acceptedAt), ms(it.idem.ExpiresAt)})
			keyed = append(keyed, it)
		}
	}
	var n int64
	var err error
	switch {
	case len(rows) == 0:
	case b.s.d.foldWrites:
		n, err = b.execN(b.s.q.accept.idemFolded, arrays(rows)...)
	default:
		n, err = b.insertChunksN(idemInsertHead, 8, idemInsertTail, rows)
	}
	if err != nil {
		return nil, fmt.Errorf("store: accept: idempotency records: %w", err)
	}
	inserted := make(map[idemKey]bool, len(keyed))
	for _, it := range keyed {
		k := idemKey{it.idem.Issuer, it.idem.Subject, it.idem.Key}
		if n == int64(len(rows)) {
			inserted[k] = true
			continue
		}
		var owner string
		if err := b.get(&owner, b.s.q.accept.idemOwner, k.issuer, k.subject, k.key); err != nil {
			return nil, fmt.Errorf("store: accept %s: read idempotency record: %w", it.id, err)
		}
		if owner == it.id {
			inserted[k] = true
		}
	}
	return inserted, nil
}

// insertMessagesAndPayloads inserts the message rows, then their payloads keyed by row id.
func (b *batch) insertMessagesAndPayloads(fresh []pendingAccept) error {
	if len(fresh) == 0 {
		return nil
	}
	rows := make([][]any, len(fresh))
	for i, p := range fresh {
		rows[i] = p.it.message
	}
	seqs := make(map[string]int64, len(fresh))
	err := b.insertChunks(msgInsertHead, 29, msgInsertTail, rows, func(scan func(...any) error) error {
		var id string
		var seq int64
		if err := scan(&id, &seq); err != nil {
			return err
		}
		seqs[id] = seq
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: accept: messages: %w", err)
	}
	payloads := make([][]any, len(fresh))
	for i, p := range fresh {
		seq, ok := seqs[p.it.id]
		if !ok {
			return fmt.Errorf("store: accept %s: no row id returned", p.it.id)
		}
		payloads[i] = []any{seq, p.it.payload}
	}
	if _, err := b.insertChunksN(payloadInsertHead, 2, "", payloads); err != nil {
		return fmt.Errorf("store: accept: payloads: %w", err)
	}
	return nil
}

// auditMany chains one record per acceptance, in order, and inserts them.
func (b *batch) auditMany(fresh []pendingAccept) error {
	rows, chain := b.auditRows(fresh)
	if _, err := b.insertChunksN(auditInsertHead, 9, "", rows); err != nil {
		return fmt.Errorf("store: accept: audit records: %w", err)
	}
	b.chain = chain
	return nil
}

// auditRows chains one record per acceptance, in order, from the batch's chain, and returns
// their columns and the chain as they leave it.
func (b *batch) auditRows(fresh []pendingAccept) ([][]any, chainState) {
	rows := make([][]any, 0, len(fresh))
	chain := b.chain
	for _, p := range fresh {
		e := p.it.audit
		r := auditRecord{writer: b.w.id, seq: chain.seq + 1, at: ms(e.At), event: e.Event,
			actor: e.Actor, messageID: e.MessageID, outcome: e.Outcome}
		prev := chain.mac
		if prev == nil {
			prev = []byte{}
		}
		mac := recordMAC(b.w.mac, prev, &r)
		rows = append(rows, []any{r.writer, r.seq, r.at, r.event, r.actor, r.messageID, r.outcome, prev, mac})
		chain = chainState{seq: r.seq, mac: mac}
	}
	return rows, chain
}

// insertChunksN runs a multi-row insert over rows in prepared chunk sizes and returns how
// many rows it changed.
func (b *batch) insertChunksN(head string, cols int, tail string, rows [][]any) (int64, error) {
	var changed int64
	err := b.eachChunk(head, cols, tail, rows, func(st *sqlx.Stmt, args []any) error {
		res, err := st.ExecContext(b.ctx, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		changed += n
		return err
	})
	return changed, err
}

// insertChunks runs a multi-row insert with a RETURNING tail over rows in prepared chunk
// sizes, and hands each returned row to each.
func (b *batch) insertChunks(head string, cols int, tail string, rows [][]any, each func(scan func(...any) error) error) error {
	return b.eachChunk(head, cols, tail, rows, func(st *sqlx.Stmt, args []any) error {
		rs, err := st.QueryContext(b.ctx, args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			if err := each(rs.Scan); err != nil {
				rs.Close()
				return err
			}
		}
		if err := rs.Close(); err != nil {
			return err
		}
		return rs.Err()
	})
}

// eachChunk cuts rows into the prepared chunk sizes and runs run with each chunk's statement
// and flattened arguments.
func (b *batch) eachChunk(head string, cols int, tail string, rows [][]any, run func(st *sqlx.Stmt, args []any) error) error {
	at := 0
	for _, n := range splitRows(len(rows)) {
		query := multiRow(head, cols, n, tail) // rebound once, when first prepared
		args := make([]any, 0, n*cols)
		for _, r := range rows[at : at+n] {
			args = append(args, r...)
		}
		at += n
		st, err := b.prepared(query)
		if err != nil {
			return err
		}
		if err := run(st, args); err != nil {
			return err
		}
	}
	return nil
}
