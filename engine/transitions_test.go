package engine

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"switchboard/packages"
)

func decideFixture() (*Message, *packages.SenderProfile, time.Time) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sp := &packages.SenderProfile{
		ID: "reminders", Channel: "sms", Provider: "primary", FallbackProviders: []string{"backup"},
		Retry:       packages.RetryPolicy{MaximumAttempts: 3, InitialDelaySeconds: 30, MaximumDelaySeconds: 3600},
		OnUncertain: "hold",
	}
	m := &Message{ID: "m1", Dispatch: DispatchSending, Report: ReportNone, Provider: "primary",
		Generation: 1, Attempt: 1, ExpiresAt: now.Add(24 * time.Hour), NextAttemptAt: now}
	return m, sp, now
}

func TestDecide(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		mutate       func(*Message, *packages.SenderProfile)
		outcome      Outcome
		wantDispatch Dispatch
		wantAttempt  AttemptOutcome
		wantProvider string
		wantReport   Report
		wantDelay    time.Duration // NextAttemptAt - now, when queued
		wantCode     string
	}{
		{name: "accepted with receipts to come", outcome: Outcome{Class: OutcomeAccepted, ProviderReference: "r1", Report: ReportNone},
			wantDispatch: DispatchSubmitted, wantAttempt: AttemptAccepted, wantProvider: "primary", wantReport: ReportNone},
		{name: "accepted by a peer is delivered", outcome: Outcome{Class: OutcomeAccepted, Report: ReportDelivered},
			wantDispatch: DispatchSubmitted, wantAttempt: AttemptAccepted, wantProvider: "primary", wantReport: ReportDelivered},
		{name: "accepted by smtp reads unavailable", outcome: Outcome{Class: OutcomeAccepted, Report: ReportUnavailable},
			wantDispatch: DispatchSubmitted, wantAttempt: AttemptAccepted, wantProvider: "primary", wantReport: ReportUnavailable},
		{name: "transient retries after the first backoff", outcome: Outcome{Class: OutcomeTransient, Code: "http.503"},
			wantDispatch: DispatchQueued, wantAttempt: AttemptTransient, wantProvider: "primary", wantReport: ReportNone,
			wantDelay: 15 * time.Second, wantCode: "http.503"},
		{name: "transient honours retry-after", outcome: Outcome{Class: OutcomeTransient, RetryAfter: 5 * time.Minute},
			wantDispatch: DispatchQueued, wantAttempt: AttemptTransient, wantProvider: "primary", wantReport: ReportNone,
			wantDelay: 5 * time.Minute},
		{name: "transient with attempts exhausted moves to the fallback",
			mutate:  func(m *Message, _ *packages.SenderProfile) { m.ProviderAttempts = 2 },
			outcome: Outcome{Class: OutcomeTransient}, wantDispatch: DispatchQueued, wantAttempt: AttemptTransient,
			wantProvider: "backup", wantReport: ReportNone, wantDelay: 0},
		{name: "transient exhausted on the last provider fails",
			mutate: func(m *Message, _ *packages.SenderProfile) {
				m.ProviderAttempts = 2
				m.FallbackIndex = 1
				m.Provider = "backup"
			},
			outcome: Outcome{Class: OutcomeTransient}, wantDispatch: DispatchFailed, wantAttempt: AttemptTransient,
			wantProvider: "backup", wantReport: ReportNone, wantCode: "attempts.exhausted"},
		{name: "permanent moves to the fallback at once", outcome: Outcome{Class: OutcomePermanent, Code: "http.400"},
			wantDispatch: DispatchQueued, wantAttempt: AttemptPermanent, wantProvider: "backup", wantReport: ReportNone, wantCode: "http.400"},
		{name: "permanent without fallback fails with its code",
			mutate:  func(_ *Message, sp *packages.SenderProfile) { sp.FallbackProviders = nil },
			outcome: Outcome{Class: OutcomePermanent, Code: "http.400"}, wantDispatch: DispatchFailed,
			wantAttempt: AttemptPermanent, wantProvider: "primary", wantReport: ReportNone, wantCode: "http.400"},
		{name: "maybe-sent under hold is unknown", outcome: Outcome{Class: OutcomeMaybeSent, Code: "http.timeout"},
			wantDispatch: DispatchUnknown, wantAttempt: AttemptMaybeSent, wantProvider: "primary", wantReport: ReportNone, wantCode: "http.timeout"},
		{name: "maybe-sent under retry is sent again later",
			mutate:  func(_ *Message, sp *packages.SenderProfile) { sp.OnUncertain = "retry" },
			outcome: Outcome{Class: OutcomeMaybeSent}, wantDispatch: DispatchQueued, wantAttempt: AttemptMaybeSent,
			wantProvider: "primary", wantReport: ReportNone, wantDelay: 15 * time.Second},
		{name: "maybe-sent under retry with attempts exhausted is unknown",
			mutate:  func(m *Message, sp *packages.SenderProfile) { sp.OnUncertain = "retry"; m.ProviderAttempts = 2 },
			outcome: Outcome{Class: OutcomeMaybeSent}, wantDispatch: DispatchUnknown, wantAttempt: AttemptMaybeSent,
			wantProvider: "primary", wantReport: ReportNone},
		{name: "an unclassified outcome is treated as maybe-sent", outcome: Outcome{Class: "weird"},
			wantDispatch: DispatchUnknown, wantAttempt: AttemptMaybeSent, wantProvider: "primary", wantReport: ReportNone, wantCode: "outcome.unclassified"},
		{name: "a retry that would fall after expiry expires",
			mutate:  func(m *Message, _ *packages.SenderProfile) { m.ExpiresAt = m.NextAttemptAt.Add(10 * time.Second) },
			outcome: Outcome{Class: OutcomeTransient}, wantDispatch: DispatchExpired, wantAttempt: AttemptTransient,
			wantProvider: "primary", wantReport: ReportNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, sp, now := decideFixture()
			if tt.mutate != nil {
				tt.mutate(m, sp)
			}
			d := Decide(m, sp, tt.outcome, now, 0)
			if d.Dispatch != tt.wantDispatch || d.Attempt != tt.wantAttempt || d.Provider != tt.wantProvider || d.Report != tt.wantReport {
				t.Fatalf("got dispatch %s attempt %s provider %s report %s; want %s %s %s %s",
					d.Dispatch, d.Attempt, d.Provider, d.Report, tt.wantDispatch, tt.wantAttempt, tt.wantProvider, tt.wantReport)
			}
			if tt.wantDispatch == DispatchQueued && d.NextAttemptAt.Sub(now) != tt.wantDelay {
				t.Fatalf("next attempt in %s, want %s", d.NextAttemptAt.Sub(now), tt.wantDelay)
			}
			if tt.wantCode != "" && d.Code != tt.wantCode {
				t.Fatalf("code %q, want %q", d.Code, tt.wantCode)
			}
		})
	}
}

func TestTransitionsCoverEveryDecision(t *testing.T) {
	t.Parallel()
	allowed := map[[2]Dispatch]bool{}
	for _, tr := range Transitions() {
		allowed[[2]Dispatch{tr.From, tr.To}] = true
	}
	for _, class := range []OutcomeClass{OutcomeAccepted, OutcomeTransient, OutcomePermanent, OutcomeMaybeSent} {
		for _, policy := range []string{"hold", "retry"} {
			for attempts := 0; attempts < 4; attempts++ {
				m, sp, now := decideFixture()
				sp.OnUncertain, m.ProviderAttempts = policy, attempts
				d := Decide(m, sp, Outcome{Class: class}, now, 0.5)
				if !allowed[[2]Dispatch{DispatchSending, d.Dispatch}] {
					t.Fatalf("%s/%s/%d decided sending -> %s, which the transition table does not list", class, policy, attempts, d.Dispatch)
				}
			}
		}
	}
}

func TestStatusAndReports(t *testing.T) {
	t.Parallel()
	if got := Status(DispatchSubmitted, ReportDelivered); got != "delivered" {
		t.Fatalf("submitted+delivered = %q", got)
	}
	if got := Status(DispatchSubmitted, ReportUndelivered); got != "failed" {
		t.Fatalf("submitted+undelivered = %q", got)
	}
	if got := Status(DispatchSubmitted, ReportSent); got != "submitted" {
		t.Fatalf("submitted+sent = %q", got)
	}
	if got := Status(DispatchUnknown, ReportNone); got != "unknown" {
		t.Fatalf("unknown = %q", got)
	}
	forward := [][2]Report{{ReportNone, ReportSent}, {ReportNone, ReportDelivered}, {ReportSent, ReportDelivered}, {ReportSent, ReportUndelivered}}
	for _, f := range forward {
		if !f[0].Advances(f[1]) {
			t.Fatalf("%s -> %s should advance", f[0], f[1])
		}
	}
	backward := [][2]Report{{ReportDelivered, ReportSent}, {ReportDelivered, ReportUndelivered}, {ReportSent, ReportSent},
		{ReportUnavailable, ReportDelivered}, {ReportNone, ReportNone}, {ReportUndelivered, ReportDelivered}}
	for _, b := range backward {
		if b[0].Advances(b[1]) {
			t.Fatalf("%s -> %s must not advance", b[0], b[1])
		}
	}
}

func TestRecipients(t *testing.T) {
	t.Parallel()
	good := []struct{ kind, addr string }{
		{"email", "someone@example.org"}, {"phone", "+15550100123"},
		{"peer", ed25519PeerID(7)},
		{"peer", "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"},
	}
	for _, g := range good {
		if err := CheckAddress(g.kind, g.addr); err != nil {
			t.Errorf("%s %q refused: %v", g.kind, g.addr, err)
		}
	}
	bad := []struct{ kind, addr string }{
		{"email", "Someone <someone@example.org>"}, {"email", "not-an-address"}, {"email", "a@b\r\nBcc: x@y"},
		{"phone", "15550100"}, {"phone", "+0123456789"}, {"phone", "+1 555 0100"},
		{"peer", "12D3KooW"}, {"peer", "0OIl"}, {"peer", "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5"},
	}
	for _, b := range bad {
		err := CheckAddress(b.kind, b.addr)
		if err == nil {
			t.Errorf("%s %q accepted", b.kind, b.addr)
			continue
		}
		if b.addr != "" && len(b.addr) > 4 && contains(err.Error(), b.addr) {
			t.Errorf("error echoes the address: %v", err)
		}
	}
	if _, _, err := (Recipient{Email: "a@b.c", Phone: "+15550100123"}).Kind(); err == nil {
		t.Fatal("two recipient kinds accepted")
	}
}

// ed25519PeerID encodes the peer id of a made-up Ed25519 key: an identity multihash of the
// protobuf public key (type 1, 32 bytes), in base58btc.
func ed25519PeerID(seed byte) string {
	b := []byte{0x00, 0x24, 0x08, 0x01, 0x12, 0x20}
	for i := 0; i < 32; i++ {
		b = append(b, seed+byte(i))
	}
	digits := []byte{}
	for _, c := range b {
		carry := int(c)
		for i := range digits {
			carry += int(digits[i]) << 8
			digits[i] = byte(carry % 58)
			carry /= 58
		}
		for carry > 0 {
			digits = append(digits, byte(carry%58))
			carry /= 58
		}
	}
	out := []byte{}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i := len(digits) - 1; i >= 0; i-- {
		out = append(out, base58Alphabet[digits[i]])
	}
	return string(out)
}

func TestPeerIDPrefix(t *testing.T) {
	t.Parallel()
	id := ed25519PeerID(1)
	if id[:8] != "12D3KooW" || !ValidPeerID(id) {
		t.Fatalf("made-up Ed25519 peer id %q: want prefix 12D3KooW and valid", id)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestEveryStoreMethodIsClassified classifies every method of Store: the dispatch-changing
// writes that Transitions names, and what each other method does. A new Store method fails it
// until it is classified, so that a write that changes a message's dispatch cannot appear
// without a row of Transitions.
func TestEveryStoreMethodIsClassified(t *testing.T) {
	t.Parallel()
	storeMethodRoles := map[string]string{
		"Accept":               "creates messages in queued",
		"Message":              "read",
		"ExpireDue":            "transition",
		"ClaimPage":            "transition",
		"RenewLease":           "extends a lease; no dispatch change",
		"Finish":               "transition",
		"LapsedLeases":         "read",
		"RecordReceipts":       "report steps (ReportSteps); no dispatch change",
		"Stats":                "read",
		"Ready":                "read",
		"Close":                "lifecycle",
		"ListMessages":         "read",
		"CountMessages":        "read",
		"ApplyOperatorActions": "transition",
		"CountErasable":        "read",
		"EraseBatch":           "erases payloads and records of final messages; no dispatch change",
	}
	methods := map[string]bool{}
	st := reflect.TypeFor[Store]()
	for i := range st.NumMethod() {
		name := st.Method(i).Name
		methods[name] = true
		if _, ok := storeMethodRoles[name]; !ok {
			t.Errorf("Store.%s is not classified: if it changes a message's dispatch, name it in Transitions", name)
		}
	}
	named := map[StoreWrite]bool{}
	for _, tr := range Transitions() {
		if !methods[string(tr.Write)] {
			t.Errorf("%s -> %s names %s, which is no Store method", tr.From, tr.To, tr.Write)
		}
		named[tr.Write] = true
	}
	for name, role := range storeMethodRoles {
		if !methods[name] {
			t.Errorf("%s is classified but is no Store method", name)
		}
		if (role == "transition") != named[StoreWrite(name)] {
			t.Errorf("Store.%s is classified %q, yet Transitions names it: %v", name, role, named[StoreWrite(name)])
		}
	}
}

func TestAllowedIsTheTable(t *testing.T) {
	t.Parallel()
	n := 0
	for _, from := range DispatchStates() {
		for _, to := range DispatchStates() {
			listed := slices.ContainsFunc(Transitions(), func(tr Transition) bool { return tr.From == from && tr.To == to })
			if Allowed(from, to) != listed {
				t.Fatalf("Allowed(%s, %s) = %v, the table lists it: %v", from, to, !listed, listed)
			}
			if listed {
				n++
			}
		}
	}
	if n != len(Transitions()) {
		t.Fatalf("%d distinct moves, %d rows: a move is listed twice", n, len(Transitions()))
	}
}

func TestReportSteps(t *testing.T) {
	t.Parallel()
	want := []ReportStep{{ReportNone, ReportSent}, {ReportNone, ReportDelivered}, {ReportNone, ReportUndelivered},
		{ReportSent, ReportDelivered}, {ReportSent, ReportUndelivered}}
	if got := ReportSteps(); !slices.Equal(got, want) {
		t.Fatalf("ReportSteps = %v, want %v", got, want)
	}
	if got := ReportsBefore(ReportDelivered); !slices.Equal(got, []Report{ReportNone, ReportSent}) {
		t.Fatalf("ReportsBefore(delivered) = %v", got)
	}
	for r, want := range map[Report]bool{ReportNone: false, ReportSent: true, ReportDelivered: true,
		ReportUndelivered: true, ReportUnavailable: false, "read": false} {
		if Receivable(r) != want {
			t.Fatalf("Receivable(%s) = %v", r, !want)
		}
	}
}

func TestStatusesAreWhatStatusDerives(t *testing.T) {
	t.Parallel()
	want := []string{"queued", "sending", "submitted", "failed", "unknown", "cancelled", "expired", "delivered"}
	if got := Statuses(); !slices.Equal(got, want) {
		t.Fatalf("Statuses = %v, want %v", got, want)
	}
	for _, d := range DispatchStates() {
		for _, r := range ReportStates() {
			if s := Status(d, r); !slices.Contains(Statuses(), s) {
				t.Fatalf("%s+%s reads %q, which Statuses does not list", d, r, s)
			}
		}
	}
}

func TestDecideWithoutProfile(t *testing.T) {
	t.Parallel()
	m, _, now := decideFixture()
	m.FallbackIndex, m.ProviderAttempts = 1, 2
	d := Decide(m, nil, Outcome{Class: OutcomePermanent, Code: "profile.unknown"}, now, 0)
	if d.Dispatch != DispatchFailed || d.Code != "profile.unknown" || d.Provider != "primary" || d.FallbackIndex != 1 || d.ProviderAttempts != 3 {
		t.Fatalf("without a profile: %+v", d)
	}
	if d := Decide(m, nil, Outcome{Class: OutcomeMaybeSent}, now, 0); d.Dispatch != DispatchUnknown {
		t.Fatalf("maybe-sent without a profile: %s, want unknown (hold)", d.Dispatch)
	}
}
