package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"switchboard/engine"
)

// ClaimPage claims due messages under a fresh lease, in three statements whatever the page
// size, inside one writer batch:
//
//  1. select the metadata of due messages whose payload_bytes fit MaxBytes, in claim order
//     (next_attempt_at, accepted_at, id), LIMIT MaxEntries, with the count of due messages
//     larger than MaxBytes as one aggregate of the same statement;
//  2. admit the prefix that fits MaxBytes, stopping at the first message that would overflow it
//     (ByteBudgetCut), and move the admitted to sending with the lease token, the lease expiry
//     now+leaseFor, sending_since now and attempt+1;
//  3. load the admitted payloads in one statement and restore the order in memory.
//
// Oversized messages are counted in OversizedDue and never loaded; they stay queued. Expired
// messages (expiresAt <= now) are never claimed. All messages of a page share one random
// lease token; each claim's LeaseRef names its message. A cancelled ctx stops the claim only
// before it starts: once claimed, the page is returned.
func (s *Store) ClaimPage(ctx context.Context, now time.Time, limits engine.PageLimits, leaseFor time.Duration) (engine.Page, error) {
	if limits.MaxEntries <= 0 || limits.MaxBytes <= 0 {
		return engine.Page{}, fmt.Errorf("store: claim: page limits must be positive (entries %d, bytes %d)", limits.MaxEntries, limits.MaxBytes)
	}
	if leaseFor <= 0 {
		return engine.Page{}, fmt.Errorf("store: claim: lease duration %v is not positive", leaseFor)
	}
	o := &claimOp{now: now, limits: limits, lease: engine.LeaseRef{Token: rand.Text(), ExpiresAt: now.Add(leaseFor)}}
	if err := s.submitAndWait(ctx, o); err != nil {
		return engine.Page{}, err
	}
	// Decoding happens here, in the caller's goroutine, not in the writer's. A payload that
	// does not decode (a damaged row) leaves the page: its lease lapses and recovery holds the
	// message for an operator, while the rest of the page goes out.
	claims := o.page.Claims[:0]
	for i, c := range o.page.Claims {
		if body := o.bodies[i]; body != nil { // nil: erased, the engine sees an empty payload
			if err := json.Unmarshal(body, &c.Payload); err != nil {
				s.log.Error("store: claim: payload does not decode; left to lapse", "message", c.Message.ID, "err", err)
				o.page.Bytes -= c.Message.PayloadBytes
				continue
			}
		}
		claims = append(claims, c)
	}
	o.page.Claims = claims
	return o.page, nil
}

// claimOp is one ClaimPage on its way through the writer.
type claimOp struct {
	now    time.Time
	limits engine.PageLimits
	lease  engine.LeaseRef
	page   engine.Page
	bodies [][]byte // raw payloads, parallel to page.Claims
}

// claimRow is a due message with the oversized count of its page.
type claimRow struct {
	messageRow
	Oversized int `db:"oversized"`
}

// payloadRow is one stored payload.
type payloadRow struct {
	MessageSeq int64  `db:"message_seq"`
	Body       []byte `db:"body"`
}

func (o *claimOp) apply(b *batch) error {
	// A claim has no clean refusal: any failure sends the batch down the savepoint path.
	return b.step(func() error { return o.claimIn(b) }, neverClean)
}

// dueWalk runs sel between the dialect's dueWalk and dueWalkDone settings, if it has them.
func (b *batch) dueWalk(sel func() error) error {
	d := b.s.d
	if d.dueWalk == "" {
		return sel()
	}
	if err := b.execCached(d.dueWalk); err != nil {
		return err
	}
	if err := sel(); err != nil {
		return err
	}
	return b.execCached(d.dueWalkDone)
}

func (o *claimOp) claimIn(b *batch) error {
	q := &b.s.q.claim
	o.page, o.bodies = engine.Page{}, nil
	now, maxBytes := ms(o.now), o.limits.MaxBytes
	var rows []claimRow
	if err := b.dueWalk(func() error {
		args := []any{maxBytes, now, now, now, now, now, now, maxBytes, o.limits.MaxEntries}
		return b.scanEach(q.dueSelect, args, func(rs *sql.Rows) error {
			rows = append(rows, claimRow{})
			r := &rows[len(rows)-1]
			return rs.Scan(append(r.fields(), &r.Oversized)...)
		})
	}); err != nil {
		return fmt.Errorf("store: claim: select due: %w", err)
	}
	if len(rows) == 0 {
		if err := b.get(&o.page.OversizedDue, q.oversizedCount, maxBytes, now, now, now); err != nil {
			return fmt.Errorf("store: claim: count oversized: %w", err)
		}
		return nil
	}
	o.page.OversizedDue = rows[0].Oversized
	admitted := 0
	for _, r := range rows {
		if o.page.Bytes+r.PayloadBytes > maxBytes {
			o.page.ByteBudgetCut = true
			break
		}
		o.page.Bytes += r.PayloadBytes
		admitted++
	}
	rows = rows[:admitted]
	seqs := make([]int64, len(rows))
	for i := range rows {
		seqs[i] = rows[i].Seq
	}
	n, err := b.execIn(q.claimUpdate, o.lease.Token, ms(o.lease.ExpiresAt), now, now, seqs)
	if err != nil {
		return fmt.Errorf("store: claim: lease: %w", err)
	}
	if n != int64(len(seqs)) {
		return fmt.Errorf("store: claim: leased %d of %d selected messages", n, len(seqs))
	}
	for i := range rows {
		b.messageChanged(rows[i].ID)
	}
	var payloads []payloadRow
	if err := b.selectIn(&payloads, q.loadPayloads, seqs); err != nil {
		return fmt.Errorf("store: claim: load payloads: %w", err)
	}
	bySeq := make(map[int64][]byte, len(payloads))
	for _, p := range payloads {
		bySeq[p.MessageSeq] = p.Body
	}
	o.page.Claims = make([]engine.Claim, len(rows))
	o.bodies = make([][]byte, len(rows))
	for i := range rows {
		r := &rows[i].messageRow
		r.Dispatch = string(engine.DispatchSending)
		r.Attempt++
		r.EventSeq++
		r.UpdatedAt = now
		r.LeaseToken.String, r.LeaseToken.Valid = o.lease.Token, true
		r.LeaseExpiresAt.Int64, r.LeaseExpiresAt.Valid = ms(o.lease.ExpiresAt), true
		r.SendingSince.Int64, r.SendingSince.Valid = now, true
		lease := o.lease
		lease.MessageID = r.ID
		o.page.Claims[i] = engine.Claim{Message: r.message(), Lease: lease}
		o.bodies[i] = bySeq[r.Seq]
	}
	return nil
}

// RenewLease moves the expiry of every lease still held to until. Leases that are gone (the
// message was finished, recovered or claimed again) are left alone and make it return an
// error wrapping engine.ErrLeaseLost; the others are renewed all the same.
func (s *Store) RenewLease(ctx context.Context, leases []engine.LeaseRef, until time.Time) error {
	// In message order, so that two renewals (two instances recovering and renewing) lock
	// rows in one order.
	leases = slices.Clone(leases)
	slices.SortFunc(leases, func(a, b engine.LeaseRef) int { return strings.Compare(a.MessageID, b.MessageID) })
	held := make([]heldLease, len(leases))
	for i, l := range leases {
		held[i] = heldLease{key: l.MessageID, token: l.Token}
	}
	return s.renew(ctx, &renewOp{what: "lease of message", query: s.q.claim.renew, leases: held, until: until})
}

// heldLease is one lease a renewal moves: the row's key and the lease's token.
type heldLease struct {
	key   any
	token string
}

// renew runs o, and reports the leases it found gone as one error wrapping engine.ErrLeaseLost.
func (s *Store) renew(ctx context.Context, o *renewOp) error {
	if len(o.leases) == 0 {
		return nil
	}
	if err := s.submit(ctx, o); err != nil {
		return err
	}
	if o.lost > 0 {
		return fmt.Errorf("store: renew: %d of %d leases: %w", o.lost, len(o.leases), engine.ErrLeaseLost)
	}
	return nil
}

// renewOp is one renewal of message or event leases on its way through the writer: query
// moves one lease's expiry to until, given the row's key and the token.
type renewOp struct {
	what   string // names a lease in errors
	query  string
	leases []heldLease
	until  time.Time
	lost   int
}

func (o *renewOp) apply(b *batch) error {
	run := func() error {
		o.lost = 0
		for _, l := range o.leases {
			n, err := b.execN(o.query, ms(o.until), l.key, l.token)
			if err != nil {
				return fmt.Errorf("store: renew %s %v: %w", o.what, l.key, err)
			}
			if n == 0 {
				o.lost++
			}
		}
		return nil
	}
	return b.step(run, neverClean) // as receipts: no failure here is clean
}

// LapsedLeases returns up to limit sending messages whose lease expired before now, oldest
// lapse first, each with the token of that lease so that the engine can Finish it as
// interrupted. It reads metadata only and changes nothing.
func (s *Store) LapsedLeases(ctx context.Context, now time.Time, limit int) ([]engine.LapsedClaim, error) {
	if limit <= 0 {
		return nil, nil
	}
	var rows []messageRow
	if err := s.rdb.SelectContext(ctx, &rows, s.q.claim.lapsed, ms(now), limit); err != nil {
		return nil, fmt.Errorf("store: lapsed leases: %w", err)
	}
	out := make([]engine.LapsedClaim, 0, len(rows))
	for i := range rows {
		r := &rows[i]
		if !r.LeaseToken.Valid || !r.LeaseExpiresAt.Valid {
			return nil, errors.New("store: lapsed leases: a sending message has no lease")
		}
		out = append(out, engine.LapsedClaim{
			Message: r.message(),
			Lease:   engine.LeaseRef{MessageID: r.ID, Token: r.LeaseToken.String, ExpiresAt: fromMs(r.LeaseExpiresAt.Int64)},
		})
	}
	return out, nil
}
