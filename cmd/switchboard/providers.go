package main

import (
	"log/slog"

	"switchboard/cmd/wiring"
	"switchboard/engine"
	"switchboard/engine/runtime"
	"switchboard/packages"
	"switchboard/providers/peer"
	"switchboard/providers/smtp"
)

// buildProviders connects every provider the package declares, from its runtime settings.
// Provider kinds this build cannot connect yet are left out: the dispatcher then records their
// attempts as transient `provider.unavailable`, and the startup log says so.
func buildProviders(rt *runtime.Runtime, pkg *packages.Package, clock engine.Clock, log *slog.Logger, m *metrics, hooks peerHooks) (map[string]engine.Provider, error) {
	out := map[string]engine.Provider{}
	closeAll := func() {
		for _, p := range out {
			_ = p.Close()
		}
	}
	for _, decl := range pkg.Providers {
		cfg := rt.Providers[decl.ID]
		switch decl.Kind {
		case "http":
			p, err := newHTTPProvider(rt, decl, clock, log, m, wiring.InboundChannel(pkg, decl.ID))
			if err != nil {
				closeAll()
				return nil, err
			}
			out[decl.ID] = p
		case "peer":
			p, err := newPeerProvider(decl, cfg, rt.Sandbox, rt.Dispatch.Concurrency, clock, log, m, hooks)
			if err != nil {
				closeAll()
				return nil, err
			}
			out[decl.ID] = p
		case "smtp":
			p, err := newSMTPProvider(decl, cfg, clock, log)
			if err != nil {
				closeAll()
				return nil, err
			}
			out[decl.ID] = p
		default:
			log.Warn("provider kind not connected in this build; its messages wait and retry", "provider", decl.ID, "kind", decl.Kind)
		}
	}
	return out, nil
}

// newHTTPProvider builds an http gateway provider from its package adapter and runtime entry.
func newHTTPProvider(rt *runtime.Runtime, decl *packages.Provider, clock engine.Clock, log *slog.Logger, m *metrics, channel engine.Channel) (engine.Provider, error) {
	p, err := wiring.NewHTTP(rt, decl, wiring.Options{Clock: clock, Logger: log, Observer: m.observeProvider, InboundChannel: channel})
	if err != nil {
		return nil, refused("provider.invalid", "providers/"+decl.ID+"/"+decl.Adapter.ScriptPath, err.Error())
	}
	return p, nil
}

// newSMTPProvider builds an SMTP relay provider from its runtime entry.
func newSMTPProvider(decl *packages.Provider, cfg *runtime.ProviderConfig, clock engine.Clock, log *slog.Logger) (engine.Provider, error) {
	s := cfg.SMTP
	sc := smtp.Config{ID: decl.ID, Host: s.Host, Port: s.Port, TLS: s.TLS,
		Username: string(s.Username.Value()), Password: string(s.Password.Value()),
		TrustedCAFile: s.TrustedCAFile, Timeout: s.Timeout, Clock: clock, Logger: log}
	if d := s.DKIM; d != nil {
		sc.DKIM = &smtp.DKIMConfig{Domain: d.Domain, Selector: d.Selector, PrivateKeyPEM: d.PrivateKey.Value()}
	}
	p, err := smtp.New(sc)
	if err != nil {
		return nil, refused("provider.invalid", "providers."+decl.ID, err.Error())
	}
	return p, nil
}

// peerHooks connect a peer provider to durable state: its inbox, and what to do when a peer
// connects (make that peer's queued messages due, and wake the dispatcher).
type peerHooks struct {
	inbox     engine.Inbox
	connected func(peerID string)
}

// newPeerProvider builds a libp2p peer provider from its runtime entry (and adapter, if any).
// It may open as many pooled streams to one peer as the dispatcher has workers (workers).
func newPeerProvider(decl *packages.Provider, cfg *runtime.ProviderConfig, sandbox runtime.Sandbox, workers int, clock engine.Clock, log *slog.Logger, m *metrics, hooks peerHooks) (engine.Provider, error) {
	pc := cfg.Peer
	c := peer.Config{ID: decl.ID, IdentityKey: pc.IdentityKey.Value(), Listen: pc.Listen, Protocol: pc.Protocol,
		PooledProtocol: pc.PooledProtocol, Keepalive: pc.Pooled.Keepalive, IdleClose: pc.Pooled.IdleClose,
		RequestTimeout: pc.Pooled.RequestTimeout, PooledStreams: workers, OnTransport: func(ev peer.TransportEvent) { m.observePeerTransport(decl.ID, ev) },
		Relays: pc.Relays, RelayService: pc.RelayService.Enabled, RelayCircuitDuration: pc.RelayService.CircuitDuration,
		RelayCircuitBytes: pc.RelayService.CircuitBytes, AddressBook: pc.AddressBook,
		Inbox: hooks.inbox, OnPeerConnected: hooks.connected, Logger: log, Clock: clock,
		AllowedPeers: pc.AllowedPeers, AnyPeer: pc.AnyPeer,
		MessagesPerMinute: pc.InboxQuota.MessagesPerMinute, BytesPerDay: pc.InboxQuota.BytesPerDay,
		OnRefused: func(code string) { m.observeInboxRefusal(decl.ID, code) }}
	if a := decl.Adapter; a != nil {
		c.Source, c.ScriptName, c.Limits = a.Source, a.ScriptPath, wiring.SandboxLimits(sandbox)
	}
	p, err := peer.New(c)
	if err != nil {
		return nil, refused("provider.invalid", "providers."+decl.ID, err.Error())
	}
	return p, nil
}
