package peer

import (
	"context"
	"crypto/rand"
	"io"
	"testing"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"

	"switchboard/engine"
)

func TestDeliveryOverQUIC(t *testing.T) {
	t.Parallel()
	receiver := startNode(t, func(c *Config) { c.Listen = []string{"/ip4/127.0.0.1/udp/0/quic-v1"} })
	sender := startNode(t, func(c *Config) {
		c.Listen = nil
		c.AddressBook = map[string][]string{receiver.PeerID(): receiver.Addrs()}
	})
	o := sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "over quic"))
	wantOutcome(t, o, engine.OutcomeAccepted, "")
	id, _ := libp2ppeer.Decode(receiver.PeerID())
	conns := sender.host.Network().ConnsToPeer(id)
	if len(conns) == 0 {
		t.Fatal("no connection to the receiver")
	}
	for _, c := range conns {
		if c.ConnState().Transport != "quic-v1" {
			t.Fatalf("connection over %q, want quic-v1", c.ConnState().Transport)
		}
	}
}

// TestNoiseAndTLSAreBothAccepted: a sender that offers only one of the two security
// protocols still delivers.
func TestNoiseAndTLSAreBothAccepted(t *testing.T) {
	t.Parallel()
	for name, security := range map[string]libp2p.Option{
		"noise": libp2p.Security(noise.ID, noise.New),
		"tls":   libp2p.Security(libp2ptls.ID, libp2ptls.New),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			receiver := startNode(t, nil)
			priv, _, err := crypto.GenerateEd25519Key(rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			h, err := libp2p.New(libp2p.Identity(priv), libp2p.NoListenAddrs, libp2p.DisableMetrics(), security)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = h.Close() })
			answer := roundTrip(t, h, receiver, AppendEnvelope(nil, Envelope{MessageID: newMessageID(), Version: 1}))
			if o := classifyAnswer(answer); o.Class != engine.OutcomeAccepted || o.ProviderReference == "" {
				t.Fatalf("answer %q", answer)
			}
			id, _ := libp2ppeer.Decode(receiver.PeerID())
			if got := h.Network().ConnsToPeer(id)[0].ConnState().Security; string(got) != map[string]string{"noise": noise.ID, "tls": libp2ptls.ID}[name] {
				t.Fatalf("security %q", got)
			}
		})
	}
}

// roundTrip sends request from h to target on a fresh stream and returns the whole answer.
func roundTrip(t *testing.T, h host.Host, target *node, request []byte) []byte {
	t.Helper()
	s := openStream(t, h, target)
	if _, err := s.Write(request); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	answer, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	return answer
}
