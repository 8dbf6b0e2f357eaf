package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"switchboard/engine"
)

// EventSubscriptions are the subscriptions ExerciseEvents opens its stores with: endpoint
// "ep-cases" takes the messages of access profile case-notices (the profile of every test
// message), their device.unregistered events and every inbox entry; "ep-other" takes another
// profile's messages and device events and the inbox entries of provider other-gateway only.
func EventSubscriptions() []engine.Subscription {
	return []engine.Subscription{
		{Endpoint: "ep-cases", MessageProfiles: []string{"case-notices"}, Inbox: true, DeviceProfiles: []string{"case-notices"}},
		{Endpoint: "ep-other", MessageProfiles: []string{"other-profile"}, Inbox: true, InboxProviders: []string{"other-gateway"},
			DeviceProfiles: []string{"other-profile"}},
	}
}

// ExerciseEvents runs the event outbox's behaviours as parallel subtests, each on a store of its
// own. open must return a fresh, empty, migrated store that writes outbox rows for subs and
// implements engine.EventStore and engine.GatewayInbox.
func ExerciseEvents(t *testing.T, open func(t *testing.T, clock engine.Clock, subs []engine.Subscription) engine.Store) {
	t.Helper()
	h := harness{open: func(t *testing.T, clock engine.Clock) engine.Store { return open(t, clock, EventSubscriptions()) }}
	for _, nt := range []namedTest{
		{"EveryChangeWritesTheSubscribedRow", testEventsWritten},
		{"UndeliveredStatusIsSuperseded", testEventsSuperseded},
		{"SubjectsReadOnceEach", testEventSubjectsOnce},
		{"LeaseFencesAndLapses", testEventsLease},
		{"ChangeDuringDeliveryStaysPending", testEventsChangeInFlight},
		{"RetryScheduleAndGiveUp", testEventsRetry},
		{"DeliveredRowTakesTheNextChange", testEventsAfterDelivery},
		{"InboundStoredOnceWithEvents", testEventsInbound},
		{"RedeliverAndRetention", testEventsRedeliver},
		{"RefusedChangeWritesNothing", testEventsRefused},
		{"DeviceUnregisteredKeepsItsData", testDeviceUnregistered},
	} {
		t.Run(nt.name, func(t *testing.T) {
			t.Parallel()
			nt.test(t, h.setup(t))
		})
	}
}

// eventsOf is the store's engine.EventStore.
func (b *bundle) eventsOf() engine.EventStore {
	b.t.Helper()
	es, ok := b.store.(engine.EventStore)
	if !ok {
		b.t.Fatalf("%T does not implement engine.EventStore", b.store)
	}
	return es
}

// claimEvents claims up to 10 due rows of endpoint under a one-minute lease.
func (b *bundle) claimEvents(endpoint string) []engine.EventClaim {
	b.t.Helper()
	cs, err := b.eventsOf().ClaimEvents(b.ctx, endpoint, b.clock.Now(), 10, time.Minute)
	if err != nil {
		b.t.Fatalf("ClaimEvents(%s): %v", endpoint, err)
	}
	return cs
}

// events lists the rows of endpoint (every state).
func (b *bundle) events(endpoint string) []engine.EventRecord {
	b.t.Helper()
	rs, err := b.eventsOf().ListEvents(b.ctx, engine.EventQuery{Endpoint: endpoint, Limit: 100})
	if err != nil {
		b.t.Fatalf("ListEvents(%s): %v", endpoint, err)
	}
	return rs
}

// oneEvent returns endpoint's only row.
func (b *bundle) oneEvent(endpoint string) engine.EventRecord {
	b.t.Helper()
	rs := b.events(endpoint)
	if len(rs) != 1 {
		b.t.Fatalf("%s has %d rows, want 1: %+v", endpoint, len(rs), rs)
	}
	return rs[0]
}

// deliver finishes a claim as delivered with the sequence it carries.
func (b *bundle) deliver(c engine.EventClaim) {
	b.t.Helper()
	if err := b.eventsOf().FinishEvent(b.ctx, engine.EventOutcome{Lease: c.Lease, Sequence: c.Sequence,
		Delivered: true, Status: 204, At: b.clock.Now()}); err != nil {
		b.t.Fatalf("FinishEvent(delivered): %v", err)
	}
}

func testEventsWritten(t *testing.T, b *bundle) {
	b.accept("m-1")
	r := b.oneEvent("ep-cases")
	if r.Type != engine.EventMessageStatus || r.Subject != "m-1" || r.Sequence != 1 || r.State != engine.EventPending || r.Attempts != 0 {
		t.Fatalf("row after acceptance = %+v", r)
	}
	if rs := b.events("ep-other"); len(rs) != 0 {
		t.Fatalf("ep-other, subscribed to another profile, has rows: %+v", rs)
	}
	if m := b.message("m-1"); m.Sequence != 1 {
		t.Fatalf("sequence after acceptance = %d, want 1", m.Sequence)
	}
}

func testEventsSuperseded(t *testing.T, b *bundle) {
	b.accept("m-1")
	b.clock.Advance(time.Second)
	c := b.claimOne("m-1")                                                                        // sending: 2
	b.mustFinish(c, engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportNone, "ref-1") // 3
	if tally := b.receipts("sms-gateway", engine.Receipt{ProviderReference: "ref-1", Report: engine.ReportDelivered}); tally.Applied != 1 {
		t.Fatalf("receipt tally %+v", tally)
	}
	r := b.oneEvent("ep-cases")
	if r.Sequence != 4 || r.State != engine.EventPending {
		t.Fatalf("row after four changes = %+v, want one pending row at sequence 4", r)
	}
	cs := b.claimEvents("ep-cases")
	if len(cs) != 1 || cs[0].Sequence != 4 || cs[0].Subject != "m-1" {
		t.Fatalf("claimed %+v, want m-1 at sequence 4", cs)
	}
	msgs, err := b.eventsOf().EventMessages(b.ctx, []string{"m-1", "m-gone"})
	if err != nil {
		t.Fatal(err)
	}
	m := msgs["m-1"]
	if len(msgs) != 1 || m == nil || m.Sequence != 4 || m.Status() != "delivered" || len(m.Attempts) != 1 {
		t.Fatalf("EventMessages = %+v", msgs)
	}
}

// testEventSubjectsOnce reads the subjects of a page whose size is not a power of two: a store
// may pad its IN lists (repeating the last id), and neither a message nor one of its attempts
// may come back twice.
func testEventSubjectsOnce(t *testing.T, b *bundle) {
	b.accept("m-3")
	b.clock.Advance(time.Second)
	b.mustFinish(b.claimOne("m-3"), engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportNone, "ref-3")
	b.accept("m-1")
	b.accept("m-2")
	msgs, err := b.eventsOf().EventMessages(b.ctx, []string{"m-1", "m-2", "m-3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs["m-1"] == nil || msgs["m-2"] == nil || msgs["m-3"] == nil {
		t.Fatalf("EventMessages of three ids = %v", msgs)
	}
	if n := len(msgs["m-3"].Attempts); n != 1 {
		t.Fatalf("m-3, finished once, has %d attempts: %+v", n, msgs["m-3"].Attempts)
	}
	for _, id := range []string{"m-1", "m-2"} {
		if n := len(msgs[id].Attempts); n != 0 {
			t.Fatalf("%s, never claimed, has %d attempts", id, n)
		}
	}
}

func testEventsLease(t *testing.T, b *bundle) {
	b.accept("m-1")
	cs := b.claimEvents("ep-cases")
	if len(cs) != 1 {
		t.Fatalf("claimed %d rows, want 1", len(cs))
	}
	if again := b.claimEvents("ep-cases"); len(again) != 0 {
		t.Fatalf("a leased row was claimed again: %+v", again)
	}
	stale := cs[0].Lease
	stale.Token = "not-the-token"
	err := b.eventsOf().FinishEvent(b.ctx, engine.EventOutcome{Lease: stale, Sequence: 1, Delivered: true, At: b.clock.Now()})
	wantErr(t, "FinishEvent with a stale token", err, engine.ErrLeaseLost)
	// Renewed, the lease outlives its first expiry.
	if err := b.eventsOf().RenewEventLeases(b.ctx, []engine.EventLease{cs[0].Lease}, b.clock.Now().Add(2*time.Minute)); err != nil {
		t.Fatalf("RenewEventLeases: %v", err)
	}
	b.clock.Advance(90 * time.Second)
	if again := b.claimEvents("ep-cases"); len(again) != 0 {
		t.Fatalf("a renewed lease was claimed again: %+v", again)
	}
	b.clock.Advance(time.Minute) // the lease lapsed: the row is due again
	again := b.claimEvents("ep-cases")
	if len(again) != 1 || again[0].Lease.Token == cs[0].Lease.Token {
		t.Fatalf("after the lease lapsed claimed %+v", again)
	}
	err = b.eventsOf().FinishEvent(b.ctx, engine.EventOutcome{Lease: cs[0].Lease, Sequence: 1, Delivered: true, At: b.clock.Now()})
	wantErr(t, "FinishEvent under the lapsed lease", err, engine.ErrLeaseLost)
	wantErr(t, "RenewEventLeases of the lapsed lease",
		b.eventsOf().RenewEventLeases(b.ctx, []engine.EventLease{cs[0].Lease}, b.clock.Now().Add(time.Minute)), engine.ErrLeaseLost)
	b.deliver(again[0])
	if r := b.oneEvent("ep-cases"); r.State != engine.EventDelivered || r.DeliveredSequence != 1 || r.Attempts != 1 || r.Leased {
		t.Fatalf("row after delivery = %+v", r)
	}
}

func testEventsChangeInFlight(t *testing.T, b *bundle) {
	b.accept("m-1")
	cs := b.claimEvents("ep-cases") // sequence 1 goes out
	b.clock.Advance(time.Second)
	b.claimOne("m-1") // the message moves to sending while the event is in flight: sequence 2
	if r := b.oneEvent("ep-cases"); r.Sequence != 2 || !r.Leased {
		t.Fatalf("row after a change in flight = %+v, want sequence 2 still leased", r)
	}
	if again := b.claimEvents("ep-cases"); len(again) != 0 {
		t.Fatalf("a row in flight was claimed again after a change: %+v", again)
	}
	b.deliver(cs[0]) // delivered sequence 1
	r := b.oneEvent("ep-cases")
	if r.State != engine.EventPending || r.DeliveredSequence != 1 || r.Attempts != 0 || r.Leased {
		t.Fatalf("row after delivering the older sequence = %+v, want pending for sequence 2", r)
	}
	next := b.claimEvents("ep-cases")
	if len(next) != 1 || next[0].Sequence != 2 {
		t.Fatalf("claimed %+v, want sequence 2 due at once", next)
	}
}

func testEventsRetry(t *testing.T, b *bundle) {
	b.accept("m-1")
	es := b.eventsOf()
	cs := b.claimEvents("ep-cases")
	retryAt := b.clock.Now().Add(5 * time.Second)
	if err := es.FinishEvent(b.ctx, engine.EventOutcome{Lease: cs[0].Lease, Sequence: 1, Status: 500,
		Error: "answered 500", NextAttemptAt: retryAt, At: b.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	r := b.oneEvent("ep-cases")
	if r.State != engine.EventPending || r.Attempts != 1 || r.LastStatus != 500 || r.LastError != "answered 500" ||
		!r.NextAttemptAt.Equal(retryAt) || r.LastAttemptAt == nil || r.DeliveredAt != nil {
		t.Fatalf("row after a failed attempt = %+v", r)
	}
	figures, err := es.EventFigures(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f := figures["ep-cases"]; f.Pending != 1 || f.Failed != 0 || f.FailingSince.IsZero() || !f.LastSuccess.IsZero() {
		t.Fatalf("figures while failing = %+v", f)
	}
	b.clock.Advance(4 * time.Second)
	if again := b.claimEvents("ep-cases"); len(again) != 0 {
		t.Fatalf("claimed before the retry was due: %+v", again)
	}
	b.clock.Advance(time.Second)
	again := b.claimEvents("ep-cases")
	if len(again) != 1 || again[0].Attempts != 1 {
		t.Fatalf("claimed at the retry %+v, want the row with 1 attempt made", again)
	}
	if err := es.FinishEvent(b.ctx, engine.EventOutcome{Lease: again[0].Lease, Sequence: 1, GiveUp: true,
		Error: "timeout", At: b.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if r := b.oneEvent("ep-cases"); r.State != engine.EventFailed || r.Attempts != 2 {
		t.Fatalf("row after giving up = %+v", r)
	}
	figures, _ = es.EventFigures(b.ctx)
	if f := figures["ep-cases"]; f.Pending != 0 || f.Failed != 1 {
		t.Fatalf("figures after giving up = %+v", f)
	}
	b.clock.Advance(time.Hour)
	if again := b.claimEvents("ep-cases"); len(again) != 0 {
		t.Fatalf("a failed row was claimed: %+v", again)
	}
}

func testEventsAfterDelivery(t *testing.T, b *bundle) {
	b.accept("m-1")
	b.deliver(b.claimEvents("ep-cases")[0])
	b.mustCancel("m-1")
	r := b.oneEvent("ep-cases")
	if r.State != engine.EventPending || r.Sequence != 2 || r.Attempts != 0 || r.DeliveredSequence != 1 {
		t.Fatalf("row after a change of a delivered one = %+v", r)
	}
	if cs := b.claimEvents("ep-cases"); len(cs) != 1 || cs[0].Sequence != 2 {
		t.Fatalf("claimed %+v, want the cancellation (sequence 2)", cs)
	}
}

func testEventsInbound(t *testing.T, b *bundle) {
	gi, ok := b.store.(engine.GatewayInbox)
	if !ok {
		t.Fatalf("%T does not implement engine.GatewayInbox", b.store)
	}
	items := []engine.InboundItem{
		{From: "+447700900123", To: "+15550100", Text: "YES", ProviderReference: "SM-in-1"},
		{From: "+447700900124", To: "+15550100", Text: "NO", ProviderReference: "SM-in-2",
			ReceivedAt: b.clock.Now().Add(-time.Minute)},
	}
	first, err := gi.PutInbound(b.ctx, "sms-gateway", engine.ChannelSMS, items)
	if err != nil || len(first) != 2 || first[0].Duplicate || first[1].Duplicate || first[0].InboxID == "" {
		t.Fatalf("PutInbound = %+v, %v", first, err)
	}
	again, err := gi.PutInbound(b.ctx, "sms-gateway", engine.ChannelSMS, items[1:])
	if err != nil || len(again) != 1 || !again[0].Duplicate || again[0].InboxID != first[1].InboxID {
		t.Fatalf("repeat PutInbound = %+v, %v; want a duplicate of %s", again, err, first[1].InboxID)
	}
	// The same reference from another provider is another message.
	other, err := gi.PutInbound(b.ctx, "other-gateway", engine.ChannelSMS, items[:1])
	if err != nil || other[0].Duplicate {
		t.Fatalf("PutInbound from another provider = %+v, %v", other, err)
	}
	entries, _ := b.listInbox("", 10)
	if len(entries) != 3 {
		t.Fatalf("inbox holds %d entries, want 3", len(entries))
	}
	e := entries[1]
	if e.Channel != engine.ChannelSMS || e.Provider != "sms-gateway" || e.From != "+447700900124" || e.To != "+15550100" ||
		e.MessageID != "SM-in-2" || string(e.Payload) != "NO" || e.TsMs != uint64(b.clock.Now().Add(-time.Minute).UnixMilli()) {
		t.Fatalf("entry = %+v", e)
	}
	if n := len(b.events("ep-cases")); n != 3 {
		t.Fatalf("ep-cases (every inbox entry) has %d rows, want 3", n)
	}
	rs := b.events("ep-other")
	if len(rs) != 1 || rs[0].Type != engine.EventInboxReceived || rs[0].Subject != other[0].InboxID {
		t.Fatalf("ep-other (other-gateway only) has %+v", rs)
	}
	got, err := b.eventsOf().EventInboxEntries(b.ctx, []string{first[0].InboxID})
	if err != nil || got[first[0].InboxID] == nil || string(got[first[0].InboxID].Payload) != "YES" {
		t.Fatalf("EventInboxEntries = %+v, %v", got, err)
	}
	bad := []engine.InboundItem{items[0], {From: "+1", Text: "x"}}
	if _, err := gi.PutInbound(b.ctx, "sms-gateway", engine.ChannelSMS, bad); engine.CodeOf(err) != engine.CodeCallbackUnreadable {
		t.Fatalf("PutInbound with an item without a reference = %v, want %s", err, engine.CodeCallbackUnreadable)
	}
	if entries, _ := b.listInbox("", 10); len(entries) != 3 {
		t.Fatalf("a refused callback stored something: %d entries", len(entries))
	}
}

func testEventsRedeliver(t *testing.T, b *bundle) {
	b.accept("m-1")
	since := b.clock.Now()
	b.deliver(b.claimEvents("ep-cases")[0])
	es := b.eventsOf()
	if n, err := es.CountRedeliverable(b.ctx, "ep-cases", since.Add(time.Second)); err != nil || n != 0 {
		t.Fatalf("CountRedeliverable after since = %d, %v", n, err)
	}
	if n, err := es.CountRedeliverable(b.ctx, "ep-cases", since); err != nil || n != 1 {
		t.Fatalf("CountRedeliverable = %d, %v", n, err)
	}
	// Retention leaves a delivered row alone until eventDays passed, and never erases a
	// pending one.
	if n := b.erase(engine.EraseWebhookEvents, b.clock.Now().Add(-time.Second), 10); n != 0 {
		t.Fatalf("erased %d rows delivered after the cutoff", n)
	}
	n, err := es.Redeliver(b.ctx, "ep-cases", since, b.clock.Now(), 100, engine.AuditEntry{Actor: "operator-tool"})
	if err != nil || n != 1 {
		t.Fatalf("Redeliver = %d, %v", n, err)
	}
	if r := b.oneEvent("ep-cases"); r.State != engine.EventPending || r.Attempts != 0 || r.Sequence != 1 {
		t.Fatalf("row after redeliver = %+v", r)
	}
	if n := b.erase(engine.EraseWebhookEvents, b.clock.Now().Add(time.Hour), 10); n != 0 {
		t.Fatalf("erased %d pending rows", n)
	}
	b.deliver(b.claimEvents("ep-cases")[0])
	if n := b.erasable(engine.EraseWebhookEvents, b.clock.Now()); n != 1 {
		t.Fatalf("erasable = %d, want 1", n)
	}
	if n := b.erase(engine.EraseWebhookEvents, b.clock.Now(), 10); n != 1 {
		t.Fatalf("erased %d delivered rows, want 1", n)
	}
	if rs := b.events("ep-cases"); len(rs) != 0 {
		t.Fatalf("rows left after retention: %+v", rs)
	}
}

func testEventsRefused(t *testing.T, b *bundle) {
	b.accept("m-1")
	b.clock.Advance(time.Second)
	b.claimOne("m-1")
	before := b.oneEvent("ep-cases")
	err := b.apply(engine.ActionCancel, "m-1", "").Err
	if !errors.Is(err, engine.ErrDispatchStarted) {
		t.Fatalf("Cancel of a sending message = %v", err)
	}
	after := b.oneEvent("ep-cases")
	if after.Sequence != before.Sequence || !after.ChangedAt.Equal(before.ChangedAt) {
		t.Fatalf("a refused cancel changed the row: %+v, then %+v", before, after)
	}
	if m := b.message("m-1"); m.Sequence != 2 {
		t.Fatalf("sequence after acceptance and claim = %d, want 2", m.Sequence)
	}
}

// testDeviceUnregistered: a finish that carries a device.unregistered event writes one row of
// that type for the endpoint of the message's profile, with the event's data, beside the
// message.status row; a finish refused by its lease writes none.
func testDeviceUnregistered(t *testing.T, b *bundle) {
	b.accept("m-1")
	b.clock.Advance(time.Second)
	c := b.claimOne("m-1")
	at := b.clock.Now().UTC()
	stale := c
	stale.Lease.Token = "not-the-lease"
	for _, lease := range []engine.Claim{stale, c} {
		err := b.store.Finish(b.ctx, engine.Finish{Lease: lease.Lease, Attempt: engine.AttemptPermanent, Code: "fcm.unregistered",
			Dispatch: engine.DispatchFailed, DispatchCode: "fcm.unregistered", Report: c.Message.Report,
			Provider: c.Message.Provider, FinishedAt: at, Reason: engine.Reason{Code: "fcm.unregistered", By: engine.ReasonByProvider},
			Audit:              engine.AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: "m-1", At: at},
			DeviceUnregistered: &engine.DeviceUnregistered{MessageID: "m-1", Provider: "fcm", At: at}})
		if lease.Lease.Token == stale.Lease.Token {
			if !errors.Is(err, engine.ErrLeaseLost) {
				t.Fatalf("Finish under a stale lease = %v, want ErrLeaseLost", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var device []engine.EventClaim
	for _, ec := range b.claimEvents("ep-cases") {
		if ec.Type == engine.EventDeviceUnregistered {
			device = append(device, ec)
		}
	}
	if len(device) != 1 || device[0].Subject != "m-1" || device[0].Sequence != b.message("m-1").Sequence {
		t.Fatalf("device.unregistered claims %+v", device)
	}
	var data engine.DeviceUnregistered
	if err := json.Unmarshal(device[0].Data, &data); err != nil || data.MessageID != "m-1" || data.Provider != "fcm" ||
		!data.At.Equal(at) || data.Token != "" {
		t.Fatalf("data %s (%v)", device[0].Data, err)
	}
	if rs := b.events("ep-other"); len(rs) != 0 {
		t.Fatalf("ep-other, subscribed to another profile, has rows: %+v", rs)
	}
}
