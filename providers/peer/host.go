package peer

import (
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/protocol"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
	quic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
)

// Relay service limits (docs/operations.md, "Relay limits"). The stock circuit limits
// (2 min, 128 KiB per relayed connection) cannot carry one envelope, and reset a pooled stream
// within two minutes.
const (
	// DefaultRelayCircuitDuration is how long one relayed connection may last.
	DefaultRelayCircuitDuration = 30 * time.Minute
	// DefaultRelayCircuitBytes is how many bytes one relayed connection may carry in each
	// direction: a hundred maximum-size envelopes.
	DefaultRelayCircuitBytes = 100 * MaxEnvelopeBytes
	// relayBufferBytes is the relay's copy buffer per direction of a circuit.
	relayBufferBytes = 32 << 10
)

// newHost builds the libp2p host of one provider: the persistent identity, TCP and QUIC,
// Noise and TLS, yamux, the relay transport (to dial /p2p-circuit addresses and to accept
// connections through reserved relays), and a resource manager sized for 10 MiB envelopes.
// It listens nowhere yet: Start adds the listen addresses.
func newHost(priv crypto.PrivKey, protos ...protocol.ID) (host.Host, error) {
	rm, err := newResourceManager(protos)
	if err != nil {
		return nil, err
	}
	h, err := libp2p.New(
		libp2p.Identity(priv),
		libp2p.NoListenAddrs,
		libp2p.EnableRelay(),
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.Transport(quic.NewTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Security(libp2ptls.ID, libp2ptls.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.ResourceManager(rm),
		libp2p.DisableMetrics(), // the project exports its own metrics; libp2p's would carry peer ids
		libp2p.UserAgent("switchboard"),
	)
	if err != nil {
		_ = rm.Close()
		return nil, fmt.Errorf("create libp2p host: %w", err)
	}
	return h, nil
}

// newResourceManager starts from libp2p's autoscaled defaults and makes room for the
// message protocols: a stream may buffer a whole 10 MiB envelope (yamux grows its window up to
// 16 MiB, reserved against the connection), and one busy peer may have many sends in flight.
func newResourceManager(protos []protocol.ID) (network.ResourceManager, error) {
	limits := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&limits)
	limits.ConnBaseLimit.Memory = 64 << 20
	limits.StreamBaseLimit.Memory = 2 * MaxEnvelopeBytes
	for _, proto := range protos {
		limits.AddProtocolLimit(proto,
			rcmgr.BaseLimit{StreamsInbound: 1024, StreamsOutbound: 1024, Streams: 2048, Memory: 256 << 20},
			rcmgr.BaseLimitIncrease{StreamsInbound: 256, StreamsOutbound: 256, Streams: 512, Memory: 128 << 20})
		limits.AddProtocolPeerLimit(proto,
			rcmgr.BaseLimit{StreamsInbound: 256, StreamsOutbound: 256, Streams: 512, Memory: 64 << 20},
			rcmgr.BaseLimitIncrease{})
	}
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(limits.AutoScale()))
	if err != nil {
		return nil, fmt.Errorf("create resource manager: %w", err)
	}
	return rm, nil
}

// newRelayService makes h a circuit relay v2 whose circuits carry data bytes each way for
// duration. It serves whatever h's reachability, unlike libp2p's EnableRelayService option,
// which waits for AutoNAT to call the host public.
func newRelayService(h host.Host, duration time.Duration, data int64) (*relay.Relay, error) {
	rc := relay.DefaultResources()
	rc.Limit = &relay.RelayLimit{Duration: duration, Data: data}
	rc.BufferSize = relayBufferBytes
	rc.MaxCircuits = 64
	r, err := relay.New(h, relay.WithResources(rc))
	if err != nil {
		return nil, fmt.Errorf("start relay service: %w", err)
	}
	return r, nil
}
