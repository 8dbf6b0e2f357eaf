package engine

import (
	"context"
	"errors"
	"strconv"
	"time"

	"switchboard/packages"
)

// send makes one attempt and records its outcome under the claim's lease.
func (d *Dispatcher) send(ctx context.Context, c Claim) { d.attempt(ctx, c)() }

// attempt makes one attempt and returns the recording of its outcome under the claim's lease,
// for the claim loop to run apart from the worker (claimloop.go, "Recording"). Every outcome,
// including the refusals made without a send, is decided by Decide or DecideExpired.
func (d *Dispatcher) attempt(ctx context.Context, c Claim) (record func()) {
	m := &c.Message
	sp := d.cfg.Package.SenderProfile(m.SenderProfile)
	start := time.Now()
	var o Outcome
	now := d.cfg.Clock.Now()
	switch {
	case sp == nil:
		o = Outcome{Class: OutcomePermanent, Code: CodeProfileUnknown, Reason: "the sender profile is not in the package"}
	case !now.Before(m.ExpiresAt):
		return func() { d.finish(ctx, c, DecideExpired(m), now) }
	default:
		p, ok := d.cfg.Providers[m.Provider]
		if !ok {
			o = Outcome{Class: OutcomeTransient, Code: CodeProviderUnavailable, Reason: "no provider is connected under this id"}
			break
		}
		o = p.Send(ctx, d.outbound(c, sp))
	}
	if d.cfg.Observe != nil {
		d.cfg.Observe(m.Provider, o.Class, time.Since(start))
	}
	if o.Reason != "" {
		d.log.Debug("attempt finished", "message", m.ID, "provider", m.Provider, "class", o.Class, "code", o.Code, "reason", o.Reason)
	}
	now = d.cfg.Clock.Now()
	dec := Decide(m, sp, o, now, d.cfg.Jitter())
	if dec.Attempt == AttemptAccepted {
		m.ProviderRef = o.ProviderReference
	}
	return func() { d.finish(ctx, c, dec, now) }
}

// outbound builds what the provider sees.
func (d *Dispatcher) outbound(c Claim, prof *packages.SenderProfile) *Outbound {
	m := c.Message
	out := &Outbound{
		MessageID: m.ID, Generation: m.Generation, Attempt: m.Attempt, Channel: m.Channel,
		Recipient: c.Payload.Recipient, Parts: c.Payload.Parts, ContentType: c.Payload.ContentType,
		SenderProfile: SenderProfileView{ID: prof.ID, Channel: Channel(prof.Channel), Sender: prof.Sender,
			MaximumSegments: prof.MaximumSegments},
		Deadline: c.Lease.ExpiresAt,
	}
	if pd := d.cfg.Package.Provider(m.Provider); pd != nil && pd.IdempotentSubmit {
		out.IdempotencyKey = ProviderIdempotencyKey(m.ID, m.Generation)
	}
	return out
}

// ProviderIdempotencyKey is the key an idempotentSubmit provider receives: stable for a
// generation, different for the next one.
func ProviderIdempotencyKey(messageID string, generation int) string {
	return messageID + "." + strconv.Itoa(generation)
}

// finish records a decision fenced by the claim's lease.
func (d *Dispatcher) finish(ctx context.Context, c Claim, dec Decision, now time.Time) {
	m := c.Message
	ref := ""
	if dec.Attempt == AttemptAccepted {
		ref = m.ProviderRef
	}
	f := Finish{
		Lease: c.Lease, Attempt: dec.Attempt, Code: dec.Code, ProviderRef: ref,
		Dispatch: dec.Dispatch, Report: dec.Report, NextAttemptAt: dec.NextAttemptAt,
		ProviderAttempts: dec.ProviderAttempts, FallbackIndex: dec.FallbackIndex, Provider: dec.Provider,
		FinishedAt: now,
		Audit: AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: m.ID,
			Outcome: string(dec.Attempt) + "->" + string(dec.Dispatch), At: now},
	}
	if dec.Dispatch == DispatchFailed {
		f.DispatchCode = dec.Code
	}
	f.Reason = dec.Reason
	if dec.DeviceUnregistered {
		f.DeviceUnregistered = d.deviceUnregistered(c, now)
	}
	if err := d.cfg.Store.Finish(ctx, f); err != nil {
		if errors.Is(err, ErrLeaseLost) && dec.Attempt == AttemptInterrupt {
			// Recovering a lapsed lease that another instance sharing the database recovered
			// first: the message has its outcome already.
			d.log.Debug("lapsed lease recovered elsewhere", "message", m.ID)
			return
		}
		if errors.Is(err, ErrLeaseLost) {
			d.mu.Lock()
			d.figure.LeaseLostTotal++
			d.mu.Unlock()
			d.log.Warn("lease lost before the outcome was recorded", "message", m.ID, "outcome", dec.Attempt)
			return
		}
		d.log.Error("recording an outcome", "message", m.ID, "err", err)
	}
}

// deviceUnregistered is the device.unregistered event of a claim whose gateway refused the
// device token: the provider is the one this attempt went to (the decision may already name
// the next one), and the token is there only when the message's access profile opts in.
func (d *Dispatcher) deviceUnregistered(c Claim, now time.Time) *DeviceUnregistered {
	ev := &DeviceUnregistered{MessageID: c.Message.ID, Provider: c.Message.Provider, At: now.UTC()}
	if ap := d.cfg.Package.AccessProfile(c.Message.AccessProfile); ap != nil && ap.DeviceTokenInEvents {
		ev.Token = c.Payload.Recipient
	}
	return ev
}

// Recover finishes every claim whose lease lapsed (its process is gone or stalled) as an
// interrupted attempt, decided by DecideLapsed: it may have been sent, so the sender profile's
// onUncertain, the attempt count and the expiry rule decide, as for a live maybe-sent outcome.
func (d *Dispatcher) Recover(ctx context.Context) error {
	for {
		now := d.cfg.Clock.Now()
		lapsed, err := d.cfg.Store.LapsedLeases(ctx, now, 200)
		if err != nil {
			return err
		}
		for _, l := range lapsed {
			if d.loop.holds(l.Message.ID) {
				continue
			}
			m := l.Message
			dec := DecideLapsed(&m, d.cfg.Package.SenderProfile(m.SenderProfile), now, d.cfg.Jitter())
			d.finish(ctx, Claim{Message: m, Lease: l.Lease}, dec, now)
		}
		if len(lapsed) < 200 {
			return nil
		}
	}
}
