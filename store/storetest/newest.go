package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"switchboard/engine"
)

// testListNewestPaging pages newest first through messages of several profiles, channels and
// callers, some accepted in the same millisecond: each page continues exactly after the last,
// a message accepted meanwhile is not met on a later page, and every filter holds.
func testListNewestPaging(t *testing.T, b *bundle) {
	var batch []engine.Acceptance
	var want []string // newest first
	for i := range 12 {
		at := Epoch().Add(time.Duration(i/2) * time.Second) // two messages per instant
		opts := []option{withAcceptedAt(at)}
		if i%3 == 0 {
			opts = append(opts, func(a *engine.Acceptance) {
				a.Message.SenderProfile, a.Message.Channel, a.Message.Caller = "reminders-email", engine.ChannelEmail, "caller-other"
			})
		}
		batch = append(batch, b.acceptance(fmt.Sprintf("m-%02d", i), opts...))
	}
	for _, r := range b.store.Accept(b.ctx, batch) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	for i := 11; i >= 0; i-- {
		want = append(want, fmt.Sprintf("m-%02d", i))
	}
	q := engine.MessageQuery{Limit: 5}
	var got []string
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("the listing does not end")
		}
		p := b.list(q)
		got = append(got, pageIDs(p)...)
		if pages == 0 {
			b.accept("m-late", withAcceptedAt(Epoch().Add(time.Minute))) // newer than every page
		}
		if p.Next == "" {
			break
		}
		q.After = p.Next
	}
	equalIDs(t, "pages newest first", got, want)
	equalIDs(t, "a new message heads a fresh listing", pageIDs(b.list(engine.MessageQuery{Limit: 1})), []string{"m-late"})

	email := []string{"m-09", "m-06", "m-03", "m-00"}
	equalIDs(t, "sender profile", pageIDs(b.list(engine.MessageQuery{SenderProfile: "reminders-email", Limit: 10})), email)
	equalIDs(t, "channel", pageIDs(b.list(engine.MessageQuery{Channel: engine.ChannelEmail, Limit: 10})), email)
	equalIDs(t, "caller", pageIDs(b.list(engine.MessageQuery{Caller: "caller-other", Limit: 10})), email)
	window := engine.MessageQuery{AcceptedAfter: Epoch().Add(2 * time.Second), AcceptedBefore: Epoch().Add(4 * time.Second), Limit: 10}
	equalIDs(t, "accepted in [2s, 4s)", pageIDs(b.list(window)), []string{"m-07", "m-06", "m-05", "m-04"})
	if n, err := b.store.CountMessages(b.ctx, window); err != nil || n != 4 {
		t.Fatalf("CountMessages(window) = %d, %v; want 4", n, err)
	}
	mixed := engine.MessageQuery{Status: "queued", SenderProfile: "reminders-sms", AcceptedBefore: Epoch().Add(3 * time.Second), Limit: 2}
	p := b.list(mixed)
	equalIDs(t, "filters and a page", pageIDs(p), []string{"m-05", "m-04"})
	mixed.After = p.Next
	equalIDs(t, "the next page keeps the filters", pageIDs(b.list(mixed)), []string{"m-02", "m-01"})

	for _, bad := range []string{"x", "bi4x", "MTIz"} {
		_, err := b.store.ListMessages(b.ctx, engine.MessageQuery{After: bad, Limit: 1})
		if !errors.Is(err, engine.ErrInvalidCursor) {
			t.Fatalf("cursor %q: error %v, want ErrInvalidCursor", bad, err)
		}
	}
	scan := b.list(engine.MessageQuery{Order: engine.ScanOrder, Limit: 1})
	if _, err := b.store.ListMessages(b.ctx, engine.MessageQuery{After: scan.Next, Limit: 1}); !errors.Is(err, engine.ErrInvalidCursor) {
		t.Fatalf("a ScanOrder cursor was taken for a NewestFirst one: %v", err)
	}
}

// testListHeldNewest lists the held (unknown) messages among others, newest first.
func testListHeldNewest(t *testing.T, b *bundle) {
	b.inState("m-u1", engine.DispatchUnknown)
	b.inState("m-f", engine.DispatchFailed)
	b.inState("m-u2", engine.DispatchUnknown)
	b.inState("m-q", engine.DispatchQueued)
	equalIDs(t, "held", pageIDs(b.list(engine.MessageQuery{Status: "unknown", Limit: 10})), []string{"m-u2", "m-u1"})
	p := b.list(engine.MessageQuery{Status: "unknown", Limit: 1})
	equalIDs(t, "held, first page", pageIDs(p), []string{"m-u2"})
	equalIDs(t, "held, second page", pageIDs(b.list(engine.MessageQuery{Status: "unknown", After: p.Next, Limit: 1})), []string{"m-u1"})

	with := b.list(engine.MessageQuery{WithAttempts: true, Limit: 10})
	equalIDs(t, "with attempts", pageIDs(with), []string{"m-q", "m-u2", "m-f", "m-u1"})
	for _, m := range with.Messages {
		want := b.message(m.ID).Attempts
		if !reflect.DeepEqual(m.Attempts, want) {
			t.Fatalf("%s: listed attempts %+v, Message has %+v", m.ID, m.Attempts, want)
		}
	}
	if n := len(with.Messages[1].Attempts); n != 1 || with.Messages[1].Attempts[0].Outcome != engine.AttemptMaybeSent {
		t.Fatalf("the held message lists %d attempts: %+v", n, with.Messages[1].Attempts)
	}
}
