package peer

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
)

// testPooledProtocol is the pooled protocol id of these tests.
const testPooledProtocol = "/switchboard-test/2.0.0/message"

// transportEvents counts what a provider's transport reports.
type transportEvents struct {
	n [EventFallback + 1]atomic.Int64
}

func (e *transportEvents) observe(ev TransportEvent) { e.n[ev].Add(1) }
func (e *transportEvents) count(ev TransportEvent) int64 {
	return e.n[ev].Load()
}

// manualTicker stands in for the keepalive tickers: tick hands one tick to every stream's
// loop that is running, and returns once each has taken it.
type manualTicker struct {
	mu    sync.Mutex
	chans map[int]chan time.Time
	next  int
}

func newManualTicker() *manualTicker { return &manualTicker{chans: map[int]chan time.Time{}} }

func (m *manualTicker) newTicker(time.Duration) (<-chan time.Time, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.next
	m.next++
	ch := make(chan time.Time)
	m.chans[id] = ch
	return ch, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.chans, id)
	}
}

// tick delivers one tick to each running loop (a loop that ends meanwhile is skipped).
func (m *manualTicker) tick(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	chans := make([]chan time.Time, 0, len(m.chans))
	for _, ch := range m.chans {
		chans = append(chans, ch)
	}
	m.mu.Unlock()
	for _, ch := range chans {
		select {
		case ch <- time.Time{}:
		case <-time.After(testWait):
			t.Fatal("a stream's loop did not take its tick")
		}
	}
}

// pooled turns the pooled mode on in a Config and counts its transport's events.
func pooled(ev *transportEvents) func(*Config) {
	return func(c *Config) {
		c.PooledProtocol = testPooledProtocol
		c.OnTransport = ev.observe
	}
}

// both applies edits in order.
func both(edits ...func(*Config)) func(*Config) {
	return func(c *Config) {
		for _, e := range edits {
			if e != nil {
				e(c)
			}
		}
	}
}

// dialPooled opens a pooled stream from h to target, as a peer that speaks only the pooled
// protocol does.
func dialPooled(t testing.TB, h host.Host, target *node) (network.Stream, *FrameReader) {
	t.Helper()
	s := openStreamOn(t, h, target, testPooledProtocol)
	return s, NewFrameReader(s, MaxEnvelopeBytes)
}

// exchangeFrame writes one frame and reads the next one back.
func exchangeFrame(t testing.TB, s network.Stream, fr *FrameReader, typ FrameType, payload []byte) (FrameType, []byte) {
	t.Helper()
	if _, err := s.Write(AppendFrame(nil, typ, payload)); err != nil {
		t.Fatalf("write %s: %v", typ, err)
	}
	got, answer, err := fr.ReadFrame()
	if err != nil {
		t.Fatalf("read the answer to %s: %v", typ, err)
	}
	return got, answer
}

// pooledOnlyPeer is a bare host that speaks only the pooled protocol, answering each REQUEST
// with answer(envelope) and recording the frame types it read.
type pooledOnlyPeer struct {
	host.Host
	read  chan FrameType // every frame type read, in order
	ended chan error     // each stream's end: nil for a clean close
}

func startPooledOnlyPeer(t testing.TB, answer func(Envelope) (FrameType, []byte, bool)) *pooledOnlyPeer {
	t.Helper()
	pp := &pooledOnlyPeer{Host: rawHost(t, nil, true), read: make(chan FrameType, 256), ended: make(chan error, 16)}
	pp.SetStreamHandler(testPooledProtocol, func(s network.Stream) {
		fr := NewFrameReader(s, MaxEnvelopeBytes)
		for {
			typ, payload, err := fr.ReadFrame()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				_ = s.Reset()
				pp.ended <- err
				return
			}
			pp.read <- typ
			reply, body := FramePong, []byte(nil)
			if typ == FrameRequest {
				env, derr := DecodeEnvelope(payload)
				if derr != nil {
					t.Errorf("pooled-only peer: %v", derr)
				}
				var ok bool
				if reply, body, ok = answer(env); !ok {
					_ = s.Reset()
					pp.ended <- errors.New("dropped on purpose")
					return
				}
			}
			if _, err := s.Write(AppendFrame(nil, reply, body)); err != nil {
				pp.ended <- err
				return
			}
		}
	})
	return pp
}

// senderTo starts a sender that knows target's addresses.
func senderTo(t testing.TB, addrs map[string][]string, edit func(*Config)) *node {
	t.Helper()
	return startNode(t, both(func(c *Config) {
		c.Listen = nil
		c.Inbox = nil
		c.AddressBook = addrs
	}, edit))
}
