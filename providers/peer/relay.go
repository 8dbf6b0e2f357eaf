package peer

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/client"
	ma "github.com/multiformats/go-multiaddr"
)

// Reservation timing. A failed reservation is tried again after reserveRetryMin, doubling up
// to reserveRetryMax; a held one is renewed reserveRenewBefore its expiry (or at half its
// life when that is shorter), and at once when the connection to the relay closes.
const (
	reserveRetryMin    = 2 * time.Second
	reserveRetryMax    = 2 * time.Minute
	reserveRenewBefore = 5 * time.Minute
)

// reservation is this host's slot on one configured relay.
type reservation struct {
	relay   libp2ppeer.AddrInfo
	changed chan struct{} // the connection to the relay opened or closed (buffered, 1)

	mu      sync.Mutex
	active  bool
	expires time.Time
	watch   chan struct{} // closed and replaced whenever active changes
}

func newReservation(ai libp2ppeer.AddrInfo) *reservation {
	return &reservation{relay: ai, changed: make(chan struct{}, 1), watch: make(chan struct{})}
}

// connectionChanged wakes the reservation loop without blocking the swarm's notifications.
func (r *reservation) connectionChanged() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *reservation) set(active bool, expires time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expires = expires
	if r.active != active {
		r.active = active
		close(r.watch)
		r.watch = make(chan struct{})
	}
}

func (r *reservation) state() (bool, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.active, r.watch
}

// keepReservation holds a reservation on one relay until Close.
func (p *Provider) keepReservation(rsv *reservation) {
	backoff := reserveRetryMin
	for {
		ctx, cancel := context.WithTimeout(p.life, p.cfg.SendTimeout)
		got, err := client.Reserve(ctx, p.host, rsv.relay)
		cancel()
		if p.life.Err() != nil {
			rsv.set(false, time.Time{})
			return
		}
		var wait time.Duration
		if err != nil {
			rsv.set(false, time.Time{})
			p.cfg.Logger.Warn("relay reservation failed", "relay", rsv.relay.ID.String(),
				"retryIn", backoff.String(), "error", err)
			wait, backoff = backoff, min(2*backoff, reserveRetryMax)
		} else {
			backoff = reserveRetryMin
			rsv.set(true, got.Expiration)
			p.cfg.Logger.Debug("relay reservation held", "relay", rsv.relay.ID.String(),
				"expires", got.Expiration)
			wait = renewIn(time.Until(got.Expiration))
		}
		if !p.waitForRenewal(rsv, wait) {
			rsv.set(false, time.Time{})
			return
		}
	}
}

// renewIn says how long to hold a reservation that has left to live before renewing it.
func renewIn(left time.Duration) time.Duration {
	wait := left - reserveRenewBefore
	if left < 2*reserveRenewBefore {
		wait = left / 2
	}
	return max(wait, reserveRetryMin)
}

// waitForRenewal waits until wait has passed or the connection to the relay is gone; false
// when the provider closed.
func (p *Provider) waitForRenewal(rsv *reservation, wait time.Duration) bool {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-p.life.Done():
			return false
		case <-timer.C:
			return true
		case <-rsv.changed:
			if active, _ := rsv.state(); active &&
				p.host.Network().Connectedness(rsv.relay.ID) != network.Connected {
				rsv.set(false, time.Time{})
				return true
			}
		}
	}
}

// WaitReservation blocks until this host holds a reservation on the configured relay with
// the given peer id, or ctx ends. It fails at once for a relay that is not configured or
// when the provider was not started.
func (p *Provider) WaitReservation(ctx context.Context, relayID string) error {
	id, err := libp2ppeer.Decode(relayID)
	if err != nil {
		return fmt.Errorf("relay id: %w", err)
	}
	rsv := p.reservationFor(id)
	if rsv == nil {
		return fmt.Errorf("relay %s is not configured or the provider is not started", relayID)
	}
	for {
		active, watch := rsv.state()
		if active {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for a reservation on %s: %w", relayID, ctx.Err())
		case <-watch:
		}
	}
}

// circuitAddrs are the addresses through which target is reached via each configured relay.
func (p *Provider) circuitAddrs(target libp2ppeer.ID) []ma.Multiaddr {
	out := make([]ma.Multiaddr, 0, len(p.cfg.relays))
	for _, ai := range p.cfg.relays {
		if ai.ID == target {
			continue
		}
		circuit, err := ma.NewMultiaddr("/p2p/" + ai.ID.String() + "/p2p-circuit")
		if err != nil {
			continue
		}
		if len(ai.Addrs) == 0 {
			out = append(out, circuit)
			continue
		}
		for _, a := range ai.Addrs {
			out = append(out, a.Encapsulate(circuit))
		}
	}
	return out
}
