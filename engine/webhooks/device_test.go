package webhooks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// failDevice claims the fixture's next due message and finishes it failed for good with a
// device.unregistered event carrying token ("" for none), as the dispatcher does.
func (f *fixture) failDevice(token string) engine.Claim {
	f.t.Helper()
	ctx := context.Background()
	f.clock.Advance(time.Second)
	page, err := f.store.ClaimPage(ctx, f.clock.Now(), engine.PageLimits{MaxEntries: 1, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(page.Claims) != 1 {
		f.t.Fatalf("ClaimPage = %+v, %v", page, err)
	}
	c := page.Claims[0]
	now := f.clock.Now()
	if err := f.store.Finish(ctx, engine.Finish{Lease: c.Lease, Attempt: engine.AttemptPermanent, Code: "fcm.unregistered",
		Dispatch: engine.DispatchFailed, DispatchCode: "fcm.unregistered", Report: engine.ReportNone, FinishedAt: now,
		Reason:             engine.Reason{Code: "fcm.unregistered", By: engine.ReasonByProvider},
		DeviceUnregistered: &engine.DeviceUnregistered{MessageID: c.Message.ID, Provider: "fcm", At: now, Token: token}}); err != nil {
		f.t.Fatal(err)
	}
	return c
}

// deviceEvents are the device.unregistered deliveries received, as raw data.
func deviceEvents(t *testing.T, rcv *receiver) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range rcv.deliveries() {
		if d.Body.Type != engine.EventDeviceUnregistered {
			continue
		}
		var env struct {
			ID   string         `json:"id"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(d.Raw, &env); err != nil {
			t.Fatal(err)
		}
		if env.ID != d.ID {
			t.Fatalf("webhook-id %s, body id %s", d.ID, env.ID)
		}
		out = append(out, env.Data)
	}
	return out
}

// TestDeviceUnregisteredIsPostedSignedWithoutTheToken: a send refused because the device token
// is dead reaches the endpoint as a signed device.unregistered event with the message id, the
// provider and the time, and no token; the message.status event of the failure goes too.
func TestDeviceUnregisteredIsPostedSignedWithoutTheToken(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, true)
	f := newFixture(t, wallClock(), endpoint("app", rcv.srv.URL))
	f.accept(1)
	ctx := context.Background()
	c := f.failDevice("")
	at := f.clock.Now()
	if n, err := f.worker.DeliverDue(ctx); err != nil || n != 2 {
		t.Fatalf("DeliverDue = %d, %v; want the status event and the device event", n, err)
	}
	got := deviceEvents(t, rcv)
	if len(got) != 1 {
		t.Fatalf("%d device.unregistered events, want 1", len(got))
	}
	d := got[0]
	if d["messageId"] != c.Message.ID || d["provider"] != "fcm" || d["at"] != at.UTC().Format(time.RFC3339Nano) || len(d) != 3 {
		t.Fatalf("data %v, want messageId, provider and at only", d)
	}
	for _, r := range rcv.deliveries() {
		if strings.Contains(string(r.Raw), "+15550100") {
			t.Fatalf("a delivery carries the recipient: %s", r.Raw)
		}
	}
	if r := f.row("app", c.Message.ID); r.State != engine.EventDelivered {
		t.Fatalf("row %+v", r)
	}
}

// TestDeviceUnregisteredCarriesTheTokenWhenAsked: the token given with the outcome (the access
// profile opted in) is part of the data, and the event's id follows from the message's
// sequence at the failure.
func TestDeviceUnregisteredCarriesTheTokenWhenAsked(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, false)
	f := newFixture(t, wallClock(), endpoint("app", rcv.srv.URL))
	f.accept(1)
	ctx := context.Background()
	c := f.failDevice("fcm-token-1")
	if _, err := f.worker.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	got := deviceEvents(t, rcv)
	if len(got) != 1 || got[0]["token"] != "fcm-token-1" {
		t.Fatalf("device events %v, want one with the token", got)
	}
	first := engine.EventID(engine.EventDeviceUnregistered, c.Message.ID, c.Message.Sequence+1)
	var ids []string
	for _, d := range rcv.deliveries() {
		if d.Body.Type == engine.EventDeviceUnregistered {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) != 1 || ids[0] != first {
		t.Fatalf("event ids %v, want %s (the message's sequence of the failure)", ids, first)
	}
}
