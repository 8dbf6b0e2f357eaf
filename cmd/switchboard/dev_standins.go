package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"switchboard/engine"
	"switchboard/engine/stdwebhook"
	"switchboard/engine/webhooks/receiver"
	"switchboard/packages"
	"switchboard/providers/peer"
	"switchboard/providers/smtp/dkimkey"
	"switchboard/providers/smtp/smtpsink"
	"switchboard/store"
)

// devSMTP is the dev stack's SMTP sink with the DKIM key the relay signs with.
type devSMTP struct {
	sink   *smtpsink.Sink
	addr   string
	domain string
}

// mailDomain is the domain of the first smtp sender profile's sender, which dev signs for.
func mailDomain(pkg *packages.Package) string {
	for _, sp := range pkg.SenderProfiles {
		if p := pkg.Provider(sp.Provider); p != nil && p.Kind == "smtp" {
			if i := strings.LastIndexByte(sp.Sender, '@'); i >= 0 {
				return sp.Sender[i+1:]
			}
		}
	}
	return "example.org"
}

// startSMTPSink makes (or keeps) an Ed25519 DKIM key, and starts the in-process SMTP sink that
// keeps each mail as an .eml file under .switchboard/dev/mail/ and verifies its signature.
func startSMTPSink(l devPaths, pkg *packages.Package, log *slog.Logger) (*devSMTP, error) {
	domain := mailDomain(pkg)
	keyPath := filepath.Join(l.secrets, "dkim.pem")
	rec, err := dkimkey.LoadRecord(keyPath, domain, "dev")
	if errors.Is(err, fs.ErrNotExist) {
		rec, err = dkimkey.Keygen(keyPath, domain, "dev", dkimkey.Ed25519)
	}
	if err != nil {
		return nil, environment("dev.unwritable", keyPath, err)
	}
	sink := smtpsink.New(filepath.Join(l.root, "mail"), smtpsink.Options{LookupTXT: rec.Lookup(), Logger: log})
	addr, err := sink.Start("127.0.0.1:0")
	if err != nil {
		return nil, environment("listener.failed", "smtp sink", err)
	}
	return &devSMTP{sink: sink, addr: addr, domain: domain}, nil
}

// ensurePeerKey writes a libp2p identity unless the file exists.
func ensurePeerKey(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := peer.Keygen(path); err != nil && !errors.Is(err, peer.ErrKeyExists) {
		return err
	}
	return nil
}

// devCompanion is the dev stack's second peer: its own identity, inbox and SQLite file.
type devCompanion struct {
	provider *peer.Provider
	store    *store.Store
	id       string
	addrs    []string
	db       string
}

// companionTransport is how the companion peer is reached: with Pooled it also speaks that
// pooled protocol; with Relay (a relay's multiaddr ending in /p2p/<id>) it listens nowhere,
// holds a reservation on the relay, and its address is the circuit through it.
type companionTransport struct {
	Pooled, Relay string
}

// startCompanion starts the companion peer on a loopback port, or behind a relay.
func startCompanion(ctx context.Context, l devPaths, protocol string, via companionTransport, log *slog.Logger) (*devCompanion, error) {
	keyPath := filepath.Join(l.secrets, "companion-peer.key")
	if err := ensurePeerKey(keyPath); err != nil {
		return nil, environment("dev.unwritable", keyPath, err)
	}
	key, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, environment("dev.unwritable", keyPath, err)
	}
	auditKey, err := os.ReadFile(filepath.Join(l.secrets, "audit.key"))
	if err != nil {
		return nil, environment("dev.unwritable", l.secrets, err)
	}
	chain, _, err := auditKeys(auditKey)
	if err != nil {
		return nil, err
	}
	db := filepath.Join(filepath.Dir(l.dbPath), "companion.db")
	st, err := store.Open(ctx, store.Config{Path: db, AuditKey: chain, Migrate: true, Logger: log})
	if err != nil {
		return nil, environment("database.unreachable", db, err)
	}
	// The companion takes envelopes from any peer: it listens on loopback only, and the dev
	// stack's peer id is not known before the runtime file is written.
	cfg := peer.Config{ID: "companion", IdentityKey: key, Listen: []string{"/ip4/127.0.0.1/tcp/0"},
		Protocol: protocol, PooledProtocol: via.Pooled, Inbox: st, AnyPeer: true, Logger: log, Clock: engine.SystemClock{},
		// A stand-in for every peer a developer or the bench sends to: no quota to run into.
		MessagesPerMinute: 1_000_000}
	if via.Relay != "" {
		cfg.Listen, cfg.Relays = nil, []string{via.Relay}
	}
	p, err := peer.New(cfg)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("companion peer: %w", err)
	}
	if err := p.Start(ctx); err != nil {
		_ = p.Close()
		_ = st.Close()
		return nil, environment("listener.failed", "companion peer", err)
	}
	addrs := p.Addrs()
	if via.Relay != "" {
		relayID := via.Relay[strings.LastIndex(via.Relay, "/")+1:]
		if err := p.WaitReservation(ctx, relayID); err != nil {
			_ = p.Close()
			_ = st.Close()
			return nil, environment("listener.failed", "companion peer", err)
		}
		addrs = []string{via.Relay + "/p2p-circuit/p2p/" + p.PeerID()}
	}
	return &devCompanion{provider: p, store: st, id: p.PeerID(), addrs: addrs, db: db}, nil
}

// startRelay starts a circuit relay on a loopback port with the relay service's default
// limits, and returns it with its address (ending in /p2p/<id>).
func startRelay(ctx context.Context, l devPaths, log *slog.Logger) (*peer.Provider, string, error) {
	keyPath := filepath.Join(l.secrets, "relay-peer.key")
	if err := ensurePeerKey(keyPath); err != nil {
		return nil, "", environment("dev.unwritable", keyPath, err)
	}
	key, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, "", environment("dev.unwritable", keyPath, err)
	}
	p, err := peer.New(peer.Config{ID: "relay", IdentityKey: key, Listen: []string{"/ip4/127.0.0.1/tcp/0"},
		RelayService: true, Logger: log, Clock: engine.SystemClock{}})
	if err != nil {
		return nil, "", fmt.Errorf("relay peer: %w", err)
	}
	if err := p.Start(ctx); err != nil || len(p.Addrs()) == 0 {
		_ = p.Close()
		return nil, "", environment("listener.failed", "relay peer", fmt.Errorf("listen: %v", err))
	}
	return p, p.Addrs()[0], nil
}

// close stops the companion.
func (c *devCompanion) close() {
	_ = c.provider.Close()
	_ = c.store.Close()
}

// devEventReceiver is the dev stack's event endpoint.
type devEventReceiver struct {
	*receiver.Receiver
	url string
}

// startDevReceiver starts the local endpoint that checks and logs every event (keeping the last
// 100 for GET /events).
func startDevReceiver(l devPaths, log *slog.Logger) (*devEventReceiver, error) {
	secret, err := os.ReadFile(filepath.Join(l.secrets, devWebhookSecret))
	if err != nil {
		return nil, environment("dev.unwritable", l.secrets, err)
	}
	key, ok := stdwebhook.DecodeSecret(string(secret))
	if !ok {
		return nil, refused("dev.invalid", filepath.Join(l.secrets, devWebhookSecret), "not a whsec_ secret; delete it to get a new one")
	}
	rc := receiver.New(receiver.Options{Key: key, Keep: 100, KeepData: true, Logger: log})
	url, err := rc.Start("127.0.0.1:0")
	if err != nil {
		return nil, environment("listener.failed", "webhook receiver", err)
	}
	return &devEventReceiver{Receiver: rc, url: url}, nil
}
