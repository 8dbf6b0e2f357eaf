package peer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	ma "github.com/multiformats/go-multiaddr"

	"switchboard/engine"
)

// Kind is what Provider.Kind returns.
const Kind = "peer"

// Provider is one peer provider: a libp2p host that sends messages as reliable envelopes and
// stores the envelopes it receives in its Inbox. It implements engine.Provider and
// engine.Starter and is safe for concurrent use.
type Provider struct {
	cfg     resolved
	host    host.Host
	self    libp2ppeer.ID
	adapter *adapter // nil without Config.Source

	// life is cancelled by Close; background work and inbound exchanges derive from it.
	life   context.Context
	cancel context.CancelFunc

	inbound chan struct{}  // slots of concurrent inbound exchanges
	buckets *senderBuckets // each sender's per-minute allowance
	pool    *streamPool    // the pooled streams to each peer

	mu           sync.Mutex
	closed       bool
	started      bool
	relaySvc     *relay.Relay
	reservations map[libp2ppeer.ID]*reservation
	conns        map[libp2ppeer.ID]int // open connections per peer, from the notifications
	work         sync.WaitGroup        // goroutines Close must wait for; Add only under mu while !closed
	closeErr     error
	closeOnce    sync.Once
}

// New checks cfg, parses the identity key, compiles the adapter (when Config.Source is set)
// and builds the host, which can dial out at once.
// It listens nowhere and accepts nothing until Start. The caller must Close the provider.
func New(cfg Config) (*Provider, error) {
	r, err := cfg.resolve()
	if err != nil {
		return nil, fmt.Errorf("peer provider %s: %w", cfg.ID, err)
	}
	priv, err := ParseIdentityKey(r.IdentityKey)
	if err != nil {
		return nil, fmt.Errorf("peer provider %s: %w", cfg.ID, err)
	}
	var a *adapter
	if r.Source != "" {
		if a, err = newAdapter(r); err != nil {
			return nil, fmt.Errorf("peer provider %s: %w", cfg.ID, err)
		}
	}
	protos := []protocol.ID{r.protocol}
	if r.pooled != "" {
		protos = append(protos, r.pooled)
	}
	h, err := newHost(priv, protos...)
	if err != nil {
		if a != nil {
			a.program.Close()
		}
		return nil, fmt.Errorf("peer provider %s: %w", cfg.ID, err)
	}
	p := &Provider{
		cfg:          r,
		host:         h,
		adapter:      a,
		self:         h.ID(),
		inbound:      make(chan struct{}, r.MaxInbound),
		buckets:      newSenderBuckets(r.MessagesPerMinute),
		pool:         newStreamPool(),
		reservations: map[libp2ppeer.ID]*reservation{},
		conns:        map[libp2ppeer.ID]int{},
	}
	p.life, p.cancel = context.WithCancel(context.Background())
	for _, ai := range r.addressBook {
		if ai.ID == p.self {
			continue
		}
		h.Peerstore().AddAddrs(ai.ID, ai.Addrs, peerstore.PermanentAddrTTL)
	}
	for _, ai := range r.relays {
		h.Peerstore().AddAddrs(ai.ID, ai.Addrs, peerstore.PermanentAddrTTL)
		// Keep the connection that carries a reservation: the reservation ends with it.
		h.ConnManager().Protect(ai.ID, "switchboard-relay")
	}
	h.Network().Notify(&network.NotifyBundle{ConnectedF: p.connected, DisconnectedF: p.disconnected})
	return p, nil
}

// Kind returns "peer".
func (p *Provider) Kind() string { return Kind }

// PeerID returns this host's peer id.
func (p *Provider) PeerID() string { return p.self.String() }

// Addrs returns the addresses this host listens on, each ending in /p2p/<peer id>, ready for
// another host's address book. It is empty before Start and for a host without Listen.
func (p *Provider) Addrs() []string {
	var out []string
	for _, a := range p.host.Addrs() {
		if isCircuit(a) {
			continue
		}
		out = append(out, a.Encapsulate(ma.StringCast("/p2p/"+p.self.String())).String())
	}
	return out
}

// Start listens on Config.Listen, registers the stream handler (when there is an Inbox),
// starts the relay service (Config.RelayService), keeps a reservation on every configured
// relay, and dials the address book's peers once so that both sides learn the connection is
// open. It returns once listening; reservations and dials go on in the background until Close
// (ctx bounds the start only). Start may be called once.
func (p *Provider) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return fmt.Errorf("peer provider %s: start after close", p.cfg.ID)
	case p.started:
		return fmt.Errorf("peer provider %s: started twice", p.cfg.ID)
	case ctx.Err() != nil:
		return fmt.Errorf("peer provider %s: start: %w", p.cfg.ID, ctx.Err())
	}
	p.started = true
	if len(p.cfg.listen) > 0 {
		if err := p.host.Network().Listen(p.cfg.listen...); err != nil {
			return fmt.Errorf("peer provider %s: listen: %w", p.cfg.ID, err)
		}
	}
	if p.cfg.RelayService {
		svc, err := newRelayService(p.host, p.cfg.RelayCircuitDuration, p.cfg.RelayCircuitBytes)
		if err != nil {
			return fmt.Errorf("peer provider %s: %w", p.cfg.ID, err)
		}
		p.relaySvc = svc
	}
	if p.cfg.Inbox != nil {
		p.host.SetStreamHandler(p.cfg.protocol, p.handleStream)
		if p.cfg.pooled != "" {
			p.host.SetStreamHandler(p.cfg.pooled, p.handlePooled)
		}
	}
	for _, ai := range p.cfg.relays {
		rsv := newReservation(ai)
		p.reservations[ai.ID] = rsv
		p.work.Add(1)
		go func() {
			defer p.work.Done()
			p.keepReservation(rsv)
		}()
	}
	for _, ai := range p.cfg.addressBook {
		if ai.ID == p.self {
			continue
		}
		p.work.Add(1)
		go func() {
			defer p.work.Done()
			p.greet(ai.ID)
		}()
	}
	p.cfg.Logger.Info("peer host started", "peerId", p.self.String(),
		"listen", len(p.cfg.listen), "relays", len(p.cfg.relays), "relayService", p.cfg.RelayService)
	return nil
}

// greet dials one address book peer so that queued messages for it (on either side) become
// due; failure only means the peer is not there yet.
func (p *Provider) greet(id libp2ppeer.ID) {
	ctx, cancel := context.WithTimeout(p.life, p.cfg.SendTimeout)
	defer cancel()
	ctx = network.WithAllowLimitedConn(ctx, "switchboard greeting")
	if err := p.host.Connect(ctx, libp2ppeer.AddrInfo{ID: id}); err != nil {
		p.cfg.Logger.Debug("peer not reachable at start", "error", err)
	}
}

// connected reports a peer that was not connected before and now is through
// Config.OnPeerConnected, off the swarm's notification path. A second connection to a peer
// that is connected already (a direct one beside a relayed one, or both sides dialling at
// once) is not reported again.
func (p *Provider) connected(_ network.Network, c network.Conn) {
	remote := c.RemotePeer()
	if rsv := p.reservationFor(remote); rsv != nil {
		rsv.connectionChanged()
	}
	p.mu.Lock()
	p.conns[remote]++
	first := p.conns[remote] == 1
	notify := first && p.cfg.OnPeerConnected != nil && !p.closed
	if notify {
		p.work.Add(1)
	}
	p.mu.Unlock()
	if notify {
		go func() {
			defer p.work.Done()
			p.cfg.OnPeerConnected(remote.String())
		}()
	}
}

// disconnected counts a connection gone and lets the reservation of a relay know.
func (p *Provider) disconnected(_ network.Network, c network.Conn) {
	remote := c.RemotePeer()
	if rsv := p.reservationFor(remote); rsv != nil {
		rsv.connectionChanged()
	}
	p.mu.Lock()
	gone := false
	if p.conns[remote]--; p.conns[remote] <= 0 {
		delete(p.conns, remote)
		gone = true
	}
	p.mu.Unlock()
	if gone {
		p.pool.forget(remote) // the peer may come back upgraded
	}
}

// track registers one more goroutine Close must wait for; false once closed.
func (p *Provider) track() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.work.Add(1)
	return true
}

func (p *Provider) reservationFor(id libp2ppeer.ID) *reservation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reservations[id]
}

// Close stops the relay service, background work and the host, and waits for the provider's
// goroutines (a running OnPeerConnected call included). Sends in flight end as their stream
// breaks. It is safe to call more than once; later calls return the first call's result.
func (p *Provider) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		svc := p.relaySvc
		p.mu.Unlock()
		p.cancel()
		var errs []error
		if svc != nil {
			if err := svc.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close relay service: %w", err))
			}
		}
		p.host.RemoveStreamHandler(p.cfg.protocol)
		if p.cfg.pooled != "" {
			p.host.RemoveStreamHandler(p.cfg.pooled)
		}
		if err := p.host.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close host: %w", err))
		}
		p.work.Wait()
		if p.adapter != nil {
			p.adapter.program.Close()
		}
		if err := errors.Join(errs...); err != nil {
			p.closeErr = fmt.Errorf("peer provider %s: %w", p.cfg.ID, err)
		}
	})
	return p.closeErr
}

// isCircuit reports whether a is a relayed (/p2p-circuit) address.
func isCircuit(a ma.Multiaddr) bool {
	_, err := a.ValueForProtocol(ma.P_CIRCUIT)
	return err == nil
}

var (
	_ engine.Provider = (*Provider)(nil)
	_ engine.Starter  = (*Provider)(nil)
)
