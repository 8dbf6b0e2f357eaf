package peer

import (
	"crypto/rand"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"

	"switchboard/engine"
	"switchboard/providers/providertest"
)

// farKey is the identity every conformance far side uses, so that the suite's Outbound can
// name it; each case has its own hosts, so the shared id never meets itself.
var farKey = func() []byte {
	priv, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		panic(err)
	}
	raw, err := crypto.MarshalPrivateKey(priv)
	if err != nil {
		panic(err)
	}
	return raw
}()

var farID = func() string {
	id, err := IDFromKey(farKey)
	if err != nil {
		panic(err)
	}
	return id
}()

// farSide starts the far side for b and returns its address book entry and a counter of the
// envelopes it began to receive. Accept is a real provider with an inbox; the other
// behaviours are bare hosts that misbehave on purpose.
func farSide(t *testing.T, b providertest.Behaviour) ([]string, func() int) {
	t.Helper()
	if b == providertest.Unreachable {
		return []string{deadAddr(t)}, nil
	}
	if b == providertest.Accept {
		n := startNode(t, func(c *Config) { c.IdentityKey = farKey })
		return n.Addrs(), func() int { _, puts := n.inbox.snapshot(); return puts }
	}
	var received atomic.Int32
	released := make(chan struct{})
	t.Cleanup(func() { close(released) })
	h := rawHost(t, farKey, true)
	h.SetStreamHandler(DefaultProtocol, func(s network.Stream) {
		received.Add(1)
		_, _ = io.ReadAll(s)
		switch b {
		case providertest.Refuse:
			_, _ = s.Write([]byte(`{"accepted": false, "reason": "unknown recipient"}`))
			_ = s.Close()
		case providertest.DropAfterReceive:
			_ = s.Reset()
		case providertest.StallAfterReceive:
			<-released
			_ = s.Reset()
		}
	})
	return hostAddrs(h), func() int { return int(received.Load()) }
}

func TestConformance(t *testing.T) {
	t.Parallel()
	providertest.Exercise(t, providertest.Harness{
		Kind: Kind,
		New: func(t *testing.T, b providertest.Behaviour) providertest.Far {
			addrs, received := farSide(t, b)
			p, err := New(Config{
				ID: "conformance", IdentityKey: newKey(t), Clock: fixedClock{testNow},
				AddressBook: map[string][]string{farID: addrs}, SendTimeout: 5 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			return providertest.Far{Provider: p, Received: received}
		},
		Outbound: func() *engine.Outbound {
			return peerOutbound("0190f5a0-0000-7000-8000-000000000001", farID, "Conformance check.")
		},
	})
}
