package peer

import (
	"github.com/google/uuid"

	"context"
	"crypto/rand"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/core/protocol"
	ma "github.com/multiformats/go-multiaddr"

	"switchboard/engine"
)

// testWait bounds every wait on a condition in these tests: it only fires when the test has
// already failed.
const testWait = 20 * time.Second

// fixedClock is a clock that stands still.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 123_000_000, time.UTC)

// responseCacheBytes is the idempotency record's response cache size (docs/operations.md, "The peer channel").
const responseCacheBytes = 256 << 10

// memInbox is an engine.Inbox in memory with the store's semantics: the first PutInbox of a
// (from, protocol, messageId) delivers, every later one (also a concurrent one) is a
// duplicate answered with the cached response, or nil when it was not kept.
type memInbox struct {
	mu            sync.Mutex
	byKey         map[string]int
	entries       []engine.InboxEntry
	puts          int
	dropResponses bool             // keep no response: duplicates answer RESPONSE_GONE
	dropPayloads  bool             // keep no payloads (benchmarks)
	gate          chan struct{}    // when set, PutInbox waits for it to close (or ctx)
	putSeen       chan struct{}    // signalled (non-blocking) on every PutInbox
	daily         map[string]int64 // payload bytes kept per sender and UTC day
}

func newMemInbox() *memInbox {
	return &memInbox{byKey: map[string]int{}, putSeen: make(chan struct{}, 1), daily: map[string]int64{}}
}

func (m *memInbox) PutInbox(ctx context.Context, e engine.InboxEntry) (engine.InboxResult, error) {
	select {
	case m.putSeen <- struct{}{}:
	default:
	}
	if m.gate != nil {
		select {
		case <-m.gate:
		case <-ctx.Done():
			return engine.InboxResult{}, ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.puts++
	key := e.From + "\x00" + e.Protocol + "\x00" + e.MessageID
	if i, ok := m.byKey[key]; ok {
		first := m.entries[i]
		res := engine.InboxResult{Duplicate: true, InboxID: first.ID}
		if !m.dropResponses && len(first.Response) <= responseCacheBytes {
			res.Response = append([]byte(nil), first.Response...)
		}
		return res, nil
	}
	// As the store does: a new entry over its sender's quota is refused and kept nowhere.
	day := e.From + "\x00" + e.ReceivedAt.UTC().Format(time.DateOnly)
	if e.RefuseNew || (e.BytesPerDay > 0 && m.daily[day]+int64(len(e.Payload)) > e.BytesPerDay) {
		return engine.InboxResult{OverQuota: true}, nil
	}
	m.daily[day] += int64(len(e.Payload))
	if e.ID == "" {
		// As the store does: the inbox assigns the id, in the order entries are kept.
		id, err := uuid.NewV7()
		if err != nil {
			return engine.InboxResult{}, err
		}
		e.ID = id.String()
		e.Response = e.Respond(e.ID)
	}
	e.Payload = append([]byte(nil), e.Payload...)
	if m.dropPayloads {
		e.Payload = nil
	}
	m.byKey[key] = len(m.entries)
	m.entries = append(m.entries, e)
	return engine.InboxResult{InboxID: e.ID, Response: append([]byte(nil), e.Response...)}, nil
}

func (m *memInbox) ListInbox(_ context.Context, after string, limit int) ([]engine.InboxEntry, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []engine.InboxEntry
	for _, e := range m.entries {
		if e.ID > after && len(out) < limit {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil, "", nil
	}
	return out, out[len(out)-1].ID, nil
}

func (m *memInbox) snapshot() (entries []engine.InboxEntry, puts int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]engine.InboxEntry(nil), m.entries...), m.puts
}

// node is one started provider with its inbox and its connection events.
type node struct {
	*Provider
	inbox     *memInbox
	connected chan string
}

// newKey returns a marshalled Ed25519 identity key.
func newKey(t testing.TB) []byte {
	t.Helper()
	priv, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := crypto.MarshalPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// startNode builds and starts a provider listening on loopback TCP (unless edit clears
// Listen) with an in-memory inbox; it is closed when the test ends.
func startNode(t testing.TB, edit func(*Config)) *node {
	t.Helper()
	n := &node{inbox: newMemInbox(), connected: make(chan string, 64)}
	cfg := Config{
		ID:          "peers",
		IdentityKey: newKey(t),
		Listen:      []string{"/ip4/127.0.0.1/tcp/0"},
		Inbox:       n.inbox,
		AnyPeer:     true, // the tests of the allowed peers say otherwise
		// The fixed clock never refills a sender's bucket: the quota tests set their own.
		MessagesPerMinute: 1 << 30,
		Clock:             fixedClock{testNow},
		SendTimeout:       10 * time.Second,
		OnPeerConnected: func(id string) {
			select {
			case n.connected <- id:
			default:
			}
		},
	}
	if edit != nil {
		edit(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	n.Provider = p
	return n
}

// peerOutbound is a peer message to recipient.
func peerOutbound(id, recipient, body string) *engine.Outbound {
	return &engine.Outbound{
		MessageID: id, Generation: 1, Attempt: 1, Channel: engine.ChannelPeer, Recipient: recipient,
		Parts: map[string]string{"body": body}, ContentType: "text/plain",
		SenderProfile: engine.SenderProfileView{ID: "peer-profile", Channel: engine.ChannelPeer},
	}
}

var messageSeq atomic.Int64

// newMessageID returns a fresh message id.
func newMessageID() string {
	return fmt.Sprintf("0190f5a0-0000-7000-8000-%012d", messageSeq.Add(1))
}

// rawHost is a bare libp2p host on loopback (with the given key, or a fresh one) for playing
// a misbehaving far side or sender.
func rawHost(t testing.TB, key []byte, listen bool) host.Host {
	t.Helper()
	if key == nil {
		key = newKey(t)
	}
	priv, err := crypto.UnmarshalPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	opts := []libp2p.Option{libp2p.Identity(priv), libp2p.DisableMetrics(), libp2p.NoListenAddrs}
	if listen {
		opts = append(opts, libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
	}
	h, err := libp2p.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// hostAddrs returns h's listen addresses as address book strings.
func hostAddrs(h host.Host) []string {
	var out []string
	for _, a := range h.Addrs() {
		out = append(out, a.Encapsulate(ma.StringCast("/p2p/"+h.ID().String())).String())
	}
	return out
}

// openStream opens a stream from h to target on the default protocol.
func openStream(t testing.TB, h host.Host, target *node) network.Stream {
	t.Helper()
	return openStreamOn(t, h, target, DefaultProtocol)
}

// openStreamOn opens a stream from h to target on protocol id.
func openStreamOn(t testing.TB, h host.Host, target *node, id string) network.Stream {
	t.Helper()
	ai, err := libp2ppeer.AddrInfoFromString(target.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	h.Peerstore().AddAddrs(ai.ID, ai.Addrs, peerstore.PermanentAddrTTL)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	s, err := h.NewStream(ctx, ai.ID, protocol.ID(id))
	if err != nil {
		t.Fatalf("open a stream on %s: %v", id, err)
	}
	_ = s.SetDeadline(time.Now().Add(testWait))
	return s
}

// deadAddr returns a loopback TCP multiaddr where nothing listens.
func deadAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	_ = ln.Close()
	return fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", addr.Port)
}

func wantOutcome(t testing.TB, o engine.Outcome, class engine.OutcomeClass, code string) {
	t.Helper()
	if o.Class != class || o.Code != code {
		t.Fatalf("outcome %s/%q (reason %q), want %s/%q", o.Class, o.Code, o.Reason, class, code)
	}
}
