package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/packages"
	"switchboard/store"
)

// pushEnv is a push sender profile over a scripted http provider, a real store and a fake
// clock.
type pushEnv struct {
	t     *testing.T
	sub   *engine.Submitter
	disp  *engine.Dispatcher
	prov  *enginetest.ScriptedProvider
	clk   *enginetest.FakeClock
	store *store.Store
}

func newPushEnv(t *testing.T) *pushEnv {
	t.Helper()
	return newPushEnvWith(t, engine.Outcome{Class: engine.OutcomeAccepted}, false)
}

// newPushEnvWith is a pushEnv whose provider answers o, whose access profile sets
// deviceTokenInEvents to tokens, and whose store writes device.unregistered events for an
// endpoint "app".
func newPushEnvWith(t *testing.T, o engine.Outcome, tokens bool) *pushEnv {
	t.Helper()
	pkg := &packages.Package{
		Providers: []*packages.Provider{{ID: "fcm", Kind: "http"}},
		SenderProfiles: []*packages.SenderProfile{{ID: "app-push", Channel: "push", Provider: "fcm",
			Retry:       packages.RetryPolicy{MaximumAttempts: 3, InitialDelaySeconds: 30, MaximumDelaySeconds: 3600},
			OnUncertain: "hold", DefaultExpirySeconds: 86400}},
		AccessProfiles: []*packages.AccessProfile{{ID: "app", Role: "sender", Clients: []string{"app"},
			SenderProfiles: []string{"app-push"}, AllowDirectContent: true, RequestsPerMinute: 60, Burst: 10,
			DeviceTokenInEvents: tokens}},
	}
	clock := enginetest.NewFakeClock(time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC))
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "push.db"),
		AuditKey: []byte("0123456789abcdef0123456789abcdef"), Clock: clock, Migrate: true,
		Subscriptions: []engine.Subscription{{Endpoint: "app", DeviceProfiles: []string{"app"}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	prov := enginetest.NewScriptedProvider("http", o)
	e := &pushEnv{t: t, prov: prov, clk: clock, store: st}
	e.disp = engine.NewDispatcher(engine.DispatcherConfig{Package: pkg, Store: st,
		Providers: map[string]engine.Provider{"fcm": prov}, Clock: clock, Logger: slog.New(slog.DiscardHandler),
		Concurrency: 1, BatchSize: 10, MaxPayloadBytes: 1 << 20, PollInterval: time.Second, LeaseFor: time.Minute,
		Jitter: func() float64 { return 0.5 }})
	e.sub = engine.NewSubmitter(engine.SubmitterConfig{Package: pkg, Store: st, Clock: clock,
		PayloadRetention: 7 * 24 * time.Hour, ReceiptWindow: 24 * time.Hour})
	return e
}

func (e *pushEnv) submit(key string, to engine.Recipient, c *engine.DirectContent) error {
	_, err := e.sub.Submit(context.Background(), engine.Caller{Issuer: "i", Subject: "s", Pseudonym: "caller:x",
		Profile: "app", Role: "sender"}, key, requestBody(e.t, `{"k":"`+key+`"}`),
		&engine.SubmitRequest{SenderProfile: "app-push", To: to, Content: c})
	return err
}

func TestPushDirectContentReachesTheProvider(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	err := e.submit("k1", engine.Recipient{Device: "fcm-token:APA91b"}, &engine.DirectContent{
		Title: "Case\nclosed", Body: "Your case is closed.", Data: []byte(`{ "caseId" : "C-1", "kind": "closed" }`)})
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Second)
	if _, err := e.disp.DispatchDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := e.prov.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d sends", len(calls))
	}
	got := calls[0]
	if got.Channel != engine.ChannelPush || got.Recipient != "fcm-token:APA91b" || got.Parts["title"] != "Case closed" ||
		got.Parts["body"] != "Your case is closed." || got.Parts["data"] != `{"caseId":"C-1","kind":"closed"}` {
		t.Fatalf("outbound %+v", got)
	}
}

func TestPushBadInputIsRefusedNamingTheMember(t *testing.T) {
	t.Parallel()
	e := newPushEnv(t)
	ok := &engine.DirectContent{Title: "t", Body: "b"}
	for name, tc := range map[string]struct {
		to           engine.Recipient
		content      *engine.DirectContent
		code, member string
	}{
		"token with a line break":  {engine.Recipient{Device: "tok\nen"}, ok, engine.CodeRequestInvalid, "to.device"},
		"token with a NUL":         {engine.Recipient{Device: "tok\x00"}, ok, engine.CodeRequestInvalid, "to.device"},
		"token too long":           {engine.Recipient{Device: strings.Repeat("a", 4097)}, ok, engine.CodeRequestInvalid, "to.device"},
		"phone for push":           {engine.Recipient{Phone: "+15550100123"}, ok, engine.CodeContentInvalid, "to.device"},
		"data value not a string":  {engine.Recipient{Device: "device-token-1"}, &engine.DirectContent{Title: "t", Body: "b", Data: []byte(`{"n": 1}`)}, engine.CodeContentInvalid, "content.data"},
		"data nested object":       {engine.Recipient{Device: "device-token-1"}, &engine.DirectContent{Title: "t", Body: "b", Data: []byte(`{"n": {"a": "b"}}`)}, engine.CodeContentInvalid, "content.data"},
		"data over 4 KiB":          {engine.Recipient{Device: "device-token-1"}, &engine.DirectContent{Title: "t", Body: "b", Data: []byte(`{"n": "` + strings.Repeat("x", 4096) + `"}`)}, engine.CodeContentTooLarge, "content.data"},
		"no title":                 {engine.Recipient{Device: "device-token-1"}, &engine.DirectContent{Body: "b"}, engine.CodeContentInvalid, "content.title"},
		"text instead of body":     {engine.Recipient{Device: "device-token-1"}, &engine.DirectContent{Title: "t", Text: "b"}, engine.CodeContentInvalid, "content.title and content.body"},
		"body over its limit":      {engine.Recipient{Device: "device-token-1"}, &engine.DirectContent{Title: "t", Body: strings.Repeat("b", 4097)}, engine.CodeContentTooLarge, "content.body"},
		"title and body elsewhere": {engine.Recipient{Device: "device-token-1"}, &engine.DirectContent{Title: "t", Body: "b", Subject: "s"}, engine.CodeContentInvalid, "title and content.body"},
	} {
		t.Run(name, func(t *testing.T) {
			err := e.submit("bad-"+name, tc.to, tc.content)
			var p *engine.Problem
			if !errors.As(err, &p) || p.Code != tc.code || !strings.Contains(p.Detail, tc.member) {
				t.Fatalf("err = %v, want %s naming %s", err, tc.code, tc.member)
			}
			if tc.to.Device != "" && strings.Contains(p.Detail, tc.to.Device) {
				t.Fatalf("the detail repeats the token: %s", p.Detail)
			}
		})
	}
	if n := len(e.prov.Calls()); n != 0 {
		t.Fatalf("%d sends", n)
	}
}

func TestDeviceTokenForm(t *testing.T) {
	t.Parallel()
	for token, ok := range map[string]bool{
		"dGVzdA:APA91bH-x_y":                         true,
		strings.Repeat("a", 64) + "0123456789abcdef": true,
		strings.Repeat("é", 4096):                    true,
		strings.Repeat("é", 4097):                    false,
		"":                                           false,
		"tab\there":                                  false,
		"del\x7f":                                    false,
		"zero\u200bwidth":                            false,
	} {
		if err := engine.CheckAddress(engine.RecipientDevice, token); (err == nil) != ok {
			t.Errorf("CheckAddress(device, %.20q…) = %v, want ok %t", token, err, ok)
		}
	}
	if engine.RecipientKindFor(engine.ChannelPush) != engine.RecipientDevice {
		t.Fatal("push does not need a device")
	}
}

// deviceEvents dispatches what is due and returns the data of the device.unregistered events
// the store wrote for endpoint "app".
func (e *pushEnv) deviceEvents() []engine.DeviceUnregistered {
	e.t.Helper()
	ctx := context.Background()
	e.clk.Advance(time.Second)
	if _, err := e.disp.DispatchDue(ctx); err != nil {
		e.t.Fatal(err)
	}
	claims, err := e.store.ClaimEvents(ctx, "app", e.clk.Now(), 10, time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []engine.DeviceUnregistered
	for _, c := range claims {
		var d engine.DeviceUnregistered
		if c.Type != engine.EventDeviceUnregistered || json.Unmarshal(c.Data, &d) != nil {
			e.t.Fatalf("claimed %+v", c)
		}
		out = append(out, d)
	}
	return out
}

func TestDeadDeviceTokenMakesADeviceUnregisteredEvent(t *testing.T) {
	t.Parallel()
	dead := engine.Outcome{Class: engine.OutcomePermanent, Code: "fcm.unregistered", DeviceUnregistered: true}
	for _, tokens := range []bool{false, true} {
		e := newPushEnvWith(t, dead, tokens)
		if err := e.submit("k1", engine.Recipient{Device: "device-token-1"}, &engine.DirectContent{Title: "t", Body: "b"}); err != nil {
			t.Fatal(err)
		}
		got := e.deviceEvents()
		if len(got) != 1 || got[0].Provider != "fcm" || got[0].MessageID == "" || !got[0].At.Equal(e.clk.Now()) {
			t.Fatalf("tokens %t: events %+v", tokens, got)
		}
		if want := map[bool]string{false: "", true: "device-token-1"}[tokens]; got[0].Token != want {
			t.Fatalf("tokens %t: token %q, want %q", tokens, got[0].Token, want)
		}
	}
	// A permanent failure of another kind, and a transient one, make none.
	for _, o := range []engine.Outcome{{Class: engine.OutcomePermanent, Code: "fcm.invalid-argument"},
		{Class: engine.OutcomeTransient, Code: "fcm.unavailable"}} {
		e := newPushEnvWith(t, o, true)
		if err := e.submit("k1", engine.Recipient{Device: "device-token-1"}, &engine.DirectContent{Title: "t", Body: "b"}); err != nil {
			t.Fatal(err)
		}
		if got := e.deviceEvents(); len(got) != 0 {
			t.Fatalf("%s: events %+v", o.Code, got)
		}
	}
}
