package main

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"go.yaml.in/yaml/v3"

	"switchboard/engine/auth"
	"switchboard/engine/runtime"
	"switchboard/engine/stdwebhook"
	"switchboard/packages"
)

// devPaths are the files of DIR/.switchboard/dev/.
type devPaths struct {
	root, secrets, runtimePath, dbPath, issuerKeyPath, jwksPath string
	callbackSecret                                              []byte
}

func devLayout(dir string) devPaths {
	root := filepath.Join(dir, ".switchboard", "dev")
	sec := filepath.Join(root, "secrets")
	return devPaths{
		root: root, secrets: sec, runtimePath: filepath.Join(root, "runtime.yaml"),
		dbPath: filepath.Join(root, "data", "switchboard.db"), issuerKeyPath: filepath.Join(sec, "dev-issuer.pem"),
		jwksPath: filepath.Join(sec, "jwks.json"),
	}
}

// devSession is session.json: where the dev stack's parts listen.
type devSession struct {
	API string `json:"api"`
	// Metrics is the metrics listener's /metrics URL.
	Metrics string `json:"metrics,omitempty"`
	// Gateway is the first mock gateway; Gateways the mock gateway of each provider dev mocks.
	Gateway  string            `json:"gateway,omitempty"`
	Gateways map[string]string `json:"gateways,omitempty"`
	// Providers says, for each http provider, how dev answers it: the mock gateway, its
	// golden cases or the real gateway (--real).
	Providers map[string]devProvider `json:"providers,omitempty"`
	Runtime   string                 `json:"runtime"`
	Database  string                 `json:"database"`
	Issuer    string                 `json:"issuer"`
	// Console is the operator console's address, when the package has an operator client.
	Console  string              `json:"console,omitempty"`
	Audience string              `json:"audience"`
	Clients  map[string][]string `json:"clients"`
	// SMTP is the SMTP sink's address; MailDir holds one .eml file per mail it received.
	SMTP    string `json:"smtp,omitempty"`
	MailDir string `json:"mailDir,omitempty"`
	// Companion is the second peer, with its own identity and inbox.
	Companion *devPeer `json:"companion,omitempty"`
	// WebhookReceiver is the local endpoint subscribed to every event: it checks each
	// signature and lists the last events it took at Events.
	WebhookReceiver *devReceiver `json:"webhookReceiver,omitempty"`
	// webhookEvents are the event types the receiver takes (nil: every type).
	webhookEvents []string

	dkimDomain string
	// peerPooled is the pooled protocol the peer providers speak ("": one-shot only).
	peerPooled string
	// metricsAddr is the metrics listener's host:port ("" binds a free port at serve).
	metricsAddr string
	// httpEntries are the runtime entries of http providers that dev wired itself (stand-ins
	// and --real); a provider without one gets the mock's entry at Gateways.
	httpEntries map[string]map[string]any
	// secretsEnv enables secret:env references (a --real provider's secrets).
	secretsEnv bool
}

// devReceiver is the dev event receiver in session.json.
type devReceiver struct {
	URL    string `json:"url"`
	Events string `json:"events"`
	// Endpoint is its id in the dev runtime file's webhooks.
	Endpoint string `json:"endpoint"`
}

// devPeer is the companion peer in session.json.
type devPeer struct {
	PeerID   string   `json:"peerId"`
	Addrs    []string `json:"addrs"`
	Database string   `json:"database"`
}

// prepareDevDir creates the dev folder and its secrets, keeping existing keys so that tokens
// and the audit chain stay valid across restarts.
func prepareDevDir(dir string) (devPaths, error) {
	l := devLayout(dir)
	for _, d := range []string{l.root, l.secrets, filepath.Dir(l.dbPath)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return l, environment("dev.unwritable", d, err)
		}
	}
	if _, err := os.Stat(l.issuerKeyPath); errors.Is(err, fs.ErrNotExist) {
		iss, err := auth.NewDevIssuer(devIssuer, devAudience)
		if err != nil {
			return l, fmt.Errorf("make the dev issuer: %w", err)
		}
		if err := iss.WriteFiles(l.issuerKeyPath, l.jwksPath); err != nil {
			return l, environment("dev.unwritable", l.secrets, err)
		}
	}
	for _, name := range []string{"audit.key", "callback-secret"} {
		if err := ensureSecret(filepath.Join(l.secrets, name)); err != nil {
			return l, environment("dev.unwritable", l.secrets, err)
		}
	}
	if err := ensureWebhookSecret(filepath.Join(l.secrets, devWebhookSecret)); err != nil {
		return l, environment("dev.unwritable", l.secrets, err)
	}
	secret, err := os.ReadFile(filepath.Join(l.secrets, "callback-secret"))
	if err != nil {
		return l, environment("dev.unwritable", l.secrets, err)
	}
	l.callbackSecret = secret
	return l, nil
}

// ensureSecret writes 32 random bytes, hex encoded, with mode 0600 unless the file exists.
func ensureSecret(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("random secret: %w", err)
	}
	return os.WriteFile(path, []byte(hex.EncodeToString(b[:])), 0o600)
}

// devWebhookSecret is the dev receiver's whsec_ secret file; devWebhookEndpoint its id.
const (
	devWebhookSecret   = "webhook.whsec"
	devWebhookEndpoint = "dev-receiver"
)

// ensureWebhookSecret writes a whsec_ secret of 32 random bytes unless the file exists.
func ensureWebhookSecret(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("random secret: %w", err)
	}
	return os.WriteFile(path, []byte(stdwebhook.EncodeSecret(b[:])), 0o600)
}

// clientsOf lists each client with the scopes its access profile requires.
func clientsOf(pkg *packages.Package) map[string][]string {
	out := map[string][]string{}
	for _, p := range pkg.AccessProfiles {
		for _, c := range p.Clients {
			out[c] = append([]string{}, p.RequiredScopes...)
		}
	}
	return out
}

func firstSenderClient(pkg *packages.Package) string {
	for _, p := range pkg.AccessProfiles {
		if p.Role == "sender" && len(p.Clients) > 0 {
			return p.Clients[0]
		}
	}
	return "CLIENT"
}

// devRuntime is the runtime file dev writes (docs/runtime.md).
type devRuntime struct {
	APIVersion     string                    `yaml:"apiVersion"`
	Kind           string                    `yaml:"kind"`
	Package        map[string]string         `yaml:"package"`
	Listen         map[string]string         `yaml:"listen"`
	Database       map[string]string         `yaml:"database"`
	Secrets        map[string]any            `yaml:"secrets"`
	Authentication map[string]any            `yaml:"authentication"`
	Providers      map[string]map[string]any `yaml:"providers"`
	Dispatch       map[string]int            `yaml:"dispatch"`
	Audit          map[string]string         `yaml:"audit"`
	Retention      map[string]int            `yaml:"retention"`
	Console        map[string]any            `yaml:"console,omitempty"`
	Webhooks       map[string]map[string]any `yaml:"webhooks,omitempty"`
}

// writeDevRuntime writes the runtime file that binds the package to the dev stand-ins.
func writeDevRuntime(l devPaths, pkg *packages.Package, s devSession) error {
	clients := []string{}
	for c := range s.Clients {
		clients = append(clients, c)
	}
	issuer := s.Issuer
	if issuer == "" {
		issuer = devIssuer
	}
	rt := devRuntime{
		APIVersion: "switchboard/v1", Kind: "Runtime",
		Package:  map[string]string{"root": "../.."},
		Listen:   map[string]string{"api": s.API[len("http://"):], "metrics": cmp.Or(s.metricsAddr, "127.0.0.1:0")},
		Database: map[string]string{"driver": "sqlite", "path": "./data/switchboard.db"},
		Secrets:  map[string]any{"file": map[string]string{"root": "./secrets"}},
		Authentication: map[string]any{"oidc": map[string]any{
			"issuer": issuer, "audience": devAudience, "jwksFile": "./secrets/jwks.json", "allowedClients": clients,
		}},
		Providers: map[string]map[string]any{},
		Dispatch: map[string]int{"concurrency": runtime.DefaultConcurrency, "batchSize": 100, "maxPayloadBytes": 10 << 20, "pollIntervalMilliseconds": 250,
			"leaseSeconds": 10},
		Audit:     map[string]string{"keyRef": "secret:file/audit.key"},
		Retention: map[string]int{"payloadDays": 7, "recordDays": 90, "submissionReceiptDays": 7},
	}
	if s.secretsEnv {
		rt.Secrets["env"] = map[string]any{}
	}
	if c := consoleClient(pkg); c != "" {
		rt.Console = map[string]any{"enabled": true, "clientId": c}
	}
	for _, p := range pkg.Providers {
		switch p.Kind {
		case "http":
			entry := s.httpEntries[p.ID]
			if entry == nil {
				entry = standInEntry(p, s.Gateways[p.ID]+"/", nil)
			}
			rt.Providers[p.ID] = entry
		case "smtp":
			port := portOf(s.SMTP)
			if port == 0 {
				port = 2525 // no sink in this stack (tests of other parts): nothing listens there
			}
			entry := map[string]any{"kind": "smtp", "host": "127.0.0.1", "port": port, "tls": "none"}
			if s.dkimDomain != "" {
				entry["dkim"] = map[string]string{"domain": s.dkimDomain, "selector": "dev", "privateKeyRef": "secret:file/dkim.pem"}
			}
			rt.Providers[p.ID] = entry
		case "peer":
			if err := ensurePeerKey(filepath.Join(l.secrets, "peer.key")); err != nil {
				return environment("dev.unwritable", l.secrets, err)
			}
			entry := map[string]any{"kind": "peer", "identityKeyRef": "secret:file/peer.key",
				"listen": []string{"/ip4/127.0.0.1/tcp/0"}}
			if s.Companion != nil {
				entry["addressBook"] = map[string][]string{s.Companion.PeerID: s.Companion.Addrs}
			}
			if s.peerPooled != "" {
				entry["pooledProtocol"] = s.peerPooled
			}
			rt.Providers[p.ID] = entry
		}
	}
	if s.WebhookReceiver != nil {
		profiles := make([]string, 0, len(pkg.AccessProfiles))
		for _, ap := range pkg.AccessProfiles {
			profiles = append(profiles, ap.ID)
		}
		rt.Webhooks = map[string]map[string]any{devWebhookEndpoint: {
			"url": s.WebhookReceiver.URL, "secretRef": "secret:file/" + devWebhookSecret, "accessProfiles": profiles,
		}}
		if s.webhookEvents != nil {
			rt.Webhooks[devWebhookEndpoint]["events"] = s.webhookEvents
		}
	}
	doc, err := yaml.Marshal(rt)
	if err != nil {
		return fmt.Errorf("encode the dev runtime file: %w", err)
	}
	if err := os.WriteFile(l.runtimePath, append([]byte("# Written by `switchboard dev`; rewritten at each start.\n"), doc...), 0o600); err != nil {
		return environment("dev.unwritable", l.runtimePath, err)
	}
	return nil
}

// portOf is the port of a host:port address (0 when there is none).
func portOf(addr string) int {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(port)
	return n
}

// writeJSONFile writes v as indented JSON with mode 0600.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}
