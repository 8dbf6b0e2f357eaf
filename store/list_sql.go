package store

import (
	"fmt"
	"strings"

	"switchboard/engine"
)

// SQL of listings: metadata only (messageColumns), never a payload. A listing is built from
// the fixed fragments below, joined with AND, so that every statement text comes from this file.

// statusCondition is the condition of a caller-visible status, derived from engine.Status (the
// one derivation) by walking every (dispatch, report) pair: a dispatch state whose every report
// reads status contributes dispatch = 'd', one where only some do contributes
// (dispatch = 'd' AND report IN (…)), and the contributions are joined with OR. ok is false
// for a word that no pair reads. The words are engine states, never caller input.
func statusCondition(status string) (cond string, ok bool) {
	var parts []string
	for _, d := range engine.DispatchStates() {
		var reads []engine.Report
		for _, r := range engine.ReportStates() {
			if engine.Status(d, r) == status {
				reads = append(reads, r)
			}
		}
		switch {
		case len(reads) == len(engine.ReportStates()):
			parts = append(parts, `dispatch = '`+string(d)+`'`)
		case len(reads) > 0:
			parts = append(parts, `(dispatch = '`+string(d)+`' AND `+reportGuard(reads)+`)`)
		}
	}
	switch len(parts) {
	case 0:
		return "", false
	case 1:
		return parts[0], true
	}
	return `(` + strings.Join(parts, " OR ") + `)`, true
}

const (
	listSelect = `SELECT ` + messageColumns + ` FROM messages`
	// A newest-first page walks an index in its order and stops after the page, however many
	// messages match: the held ones have their own; every other listing walks messages_accepted
	// rather than sort what a dispatch index finds (a long queue, say). PostgreSQL's planner
	// picks by itself (the dialect strips the hints).
	hintNewest    = ` INDEXED BY messages_accepted`
	hintHeld      = ` INDEXED BY messages_held`
	countSelect   = `SELECT count(*) FROM messages`
	condDispatch  = `dispatch = ?`
	condSender    = `sender_profile = ?`
	condChannel   = `channel = ?`
	condCaller    = `caller = ?`
	condAfter     = `accepted_at >= ?`
	condBefore    = `accepted_at < ?`
	condKept      = `payload_erased_at IS NULL`
	condAfterSeq  = `seq > ?`
	condOlderThan = `(accepted_at, id) < (?, ?)`
	orderNewest   = ` ORDER BY accepted_at DESC, id DESC LIMIT ?`
	orderScan     = ` ORDER BY seq LIMIT ?`
)

// listAttemptsSQL reads the attempts of a page's messages, in each message's order.
const listAttemptsSQL = `SELECT message_id, ` + attemptColumns + ` FROM attempts WHERE message_id IN (?)
	ORDER BY message_id, generation, attempt`

// listedAttempt is one row of listAttemptsSQL.
type listedAttempt struct {
	MessageID string `db:"message_id"`
	attemptRow
}

// listStatement builds the statement of q (a listing, or a count when count is set) and its
// arguments, with after the cursor of q.Order already decoded.
func listStatement(rebind func(string) string, q engine.MessageQuery, after listCursor, count bool) (string, []any, error) {
	var conds []string
	var args []any
	if q.Status != "" {
		c, ok := statusCondition(q.Status)
		if !ok {
			return "", nil, fmt.Errorf("store: list: unknown status %q", q.Status)
		}
		conds = append(conds, c)
	}
	if q.Dispatch != "" {
		conds, args = append(conds, condDispatch), append(args, string(q.Dispatch))
	}
	for _, f := range []struct{ cond, value string }{
		{condSender, q.SenderProfile}, {condChannel, string(q.Channel)}, {condCaller, q.Caller},
	} {
		if f.value != "" {
			conds, args = append(conds, f.cond), append(args, f.value)
		}
	}
	if !q.AcceptedAfter.IsZero() {
		conds, args = append(conds, condAfter), append(args, ms(q.AcceptedAfter))
	}
	if !q.AcceptedBefore.IsZero() {
		conds, args = append(conds, condBefore), append(args, ms(q.AcceptedBefore))
	}
	if q.PayloadKept {
		conds = append(conds, condKept)
	}
	if !count && !after.isStart() {
		if q.Order == engine.ScanOrder {
			conds, args = append(conds, condAfterSeq), append(args, after.seq)
		} else {
			conds, args = append(conds, condOlderThan), append(args, after.acceptedAt, after.id)
		}
	}
	var b strings.Builder
	switch {
	case count:
		b.WriteString(countSelect)
	case q.Order == engine.NewestFirst && q.Status == "unknown":
		b.WriteString(listSelect + hintHeld)
	case q.Order == engine.NewestFirst:
		b.WriteString(listSelect + hintNewest)
	default:
		b.WriteString(listSelect)
	}
	if len(conds) > 0 {
		b.WriteString(" WHERE ")
		b.WriteString(strings.Join(conds, " AND "))
	}
	if !count {
		switch q.Order {
		case engine.NewestFirst:
			b.WriteString(orderNewest)
		case engine.ScanOrder:
			b.WriteString(orderScan)
		default:
			return "", nil, fmt.Errorf("store: list: unknown order %d", q.Order)
		}
		args = append(args, q.Limit)
	}
	return rebind(b.String()), args, nil
}
