package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/providers/peer"
)

// newPeerSender starts a dial-only peer provider that knows the receiver's addresses. A nil
// key is a fresh identity.
func newPeerSender(t *testing.T, key []byte, receiver *peer.Provider) *peer.Provider {
	t.Helper()
	if key == nil {
		path := filepath.Join(t.TempDir(), "peer.key")
		if err := peer.Keygen(path); err != nil {
			t.Fatal(err)
		}
		key = readFile(t, path)
	}
	p, err := peer.New(peer.Config{ID: "sender", IdentityKey: key, Logger: slog.New(slog.DiscardHandler),
		AddressBook: map[string][]string{receiver.PeerID(): receiver.Addrs()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPeerInboxGuardsWithTheStore runs the quickstart's peer provider as serve builds it from
// the runtime file (allowedPeers, inboxQuota) on the real SQLite store: a stranger is refused
// and nothing is stored, an allowed peer's bytes of the day are counted by the store, and both
// refusals are counted in the metrics without a peer id.
func TestPeerInboxGuardsWithTheStore(t *testing.T) {
	t.Parallel()
	keyPath := filepath.Join(t.TempDir(), "friend.key")
	if err := peer.Keygen(keyPath); err != nil {
		t.Fatal(err)
	}
	friendKey := readFile(t, keyPath)
	friendID, err := peer.IDFromKey(friendKey)
	if err != nil {
		t.Fatal(err)
	}
	e := newAPIEnv(t, envOptions{runtime: func(doc map[string]any) {
		p := doc["providers"].(map[string]any)["peers"].(map[string]any)
		p["allowedPeers"] = []string{friendID}
		p["inboxQuota"] = map[string]any{"messagesPerMinute": 100, "bytesPerDay": 40}
	}})
	receiver := e.stack.providers["peers"].(*peer.Provider)
	if err := receiver.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	send := func(from *peer.Provider, id, body string) engine.Outcome {
		return from.Send(context.Background(), &engine.Outbound{MessageID: id, Generation: 1, Attempt: 1,
			Channel: engine.ChannelPeer, Recipient: receiver.PeerID(), Parts: map[string]string{"body": body},
			ContentType: "text/plain", Deadline: time.Now().Add(20 * time.Second)})
	}
	// A sender records a refusal as permanent, but over-quota as transient (tried again later).
	refusedWith := func(o engine.Outcome, code string) bool {
		class := engine.OutcomePermanent
		if code == peer.CodeOverQuota {
			class = engine.OutcomeTransient
		}
		return o.Class == class && strings.Contains(o.Reason, `"code":"`+code+`"`)
	}

	stranger := newPeerSender(t, nil, receiver)
	if o := send(stranger, "0190f5a0-0000-7000-8000-000000000001", "hello"); !refusedWith(o, peer.CodeNotAllowed) {
		t.Fatalf("stranger: %+v, want refused peer.not-allowed", o)
	}
	friend := newPeerSender(t, friendKey, receiver)
	for i, step := range []struct {
		id, body string
		code     string // "" = accepted
	}{
		{"0190f5a0-0000-7000-8000-000000000011", strings.Repeat("a", 25), ""},
		{"0190f5a0-0000-7000-8000-000000000012", strings.Repeat("b", 20), peer.CodeOverQuota},
		{"0190f5a0-0000-7000-8000-000000000011", strings.Repeat("a", 25), ""}, // a duplicate counts nothing
		{"0190f5a0-0000-7000-8000-000000000013", strings.Repeat("c", 15), ""},
		{"0190f5a0-0000-7000-8000-000000000014", "d", peer.CodeOverQuota},
	} {
		o := send(friend, step.id, step.body)
		if ok := (step.code == "" && o.Class == engine.OutcomeAccepted) || (step.code != "" && refusedWith(o, step.code)); !ok {
			t.Fatalf("step %d (%s): %+v, want %q", i, step.id, o, step.code)
		}
	}
	entries, _, err := e.stack.store.ListInbox(context.Background(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].From != friendID || entries[1].From != friendID {
		t.Fatalf("inbox %+v, want the friend's two envelopes only", entries)
	}

	body := e.scrapeMetrics(t)
	for _, want := range []string{
		`switchboard_inbox_refusals_total{code="peer.not-allowed",provider="peers"} 1`,
		`switchboard_inbox_refusals_total{code="peer.over-quota",provider="peers"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, id := range []string{friendID, stranger.PeerID()} {
		if strings.Contains(body, id) {
			t.Errorf("metrics name the peer %s", id)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
