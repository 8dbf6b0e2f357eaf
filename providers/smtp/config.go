package smtp

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"switchboard/engine"
	"switchboard/providers/smtp/dkimkey"
)

// TLS modes of the runtime file's tls member.
const (
	// TLSStartTLS connects in plain text and upgrades with STARTTLS before anything else; a
	// relay that does not offer it is never used in plain text.
	TLSStartTLS = "starttls"
	// TLSImplicit speaks TLS from the first byte (submissions port 465).
	TLSImplicit = "implicit"
	// TLSNone speaks plain text; New allows it only towards a loopback host.
	TLSNone = "none"
)

// Defaults applied by New to zero Config members.
const (
	DefaultTimeout                  = 30 * time.Second
	DefaultConcurrencyLimit         = 8
	DefaultMaxMessagesPerConnection = 100
	DefaultIdleTimeout              = 30 * time.Second
	DefaultLocalName                = "localhost"
	// DefaultMessageIDDomain is the Message-ID domain when there is neither a DKIM domain nor a
	// sender domain to take.
	DefaultMessageIDDomain = "switchboard"
)

// Config is everything one smtp provider needs, as plain values already resolved by the
// runtime loader (secrets read, paths absolute). New validates it.
type Config struct {
	// ID is the provider id of the package (used in logs).
	ID string
	// Host is the relay's host name or IP address, without port.
	Host string
	// Port is the relay's TCP port; 0 means 587 for starttls and 465 for implicit (none needs it).
	Port int
	// TLS is TLSStartTLS (also when empty), TLSImplicit or TLSNone.
	TLS string
	// Username and Password, when Username is set, authenticate with AUTH PLAIN (or LOGIN when
	// the relay offers only that) on every new connection.
	Username, Password string
	// DKIM, when set, signs every message.
	DKIM *DKIMConfig
	// TrustedCAFile is the path of a PEM bundle to trust instead of the system roots; "" means
	// the system roots.
	TrustedCAFile string
	// Timeout bounds one whole conversation for one message (from taking a connection to the
	// final reply); 0 means DefaultTimeout. The send's context and Outbound.Deadline may end it
	// sooner.
	Timeout time.Duration
	// ConcurrencyLimit caps the conversations in flight and so the connections kept open;
	// 0 means DefaultConcurrencyLimit.
	ConcurrencyLimit int
	// MaxMessagesPerConnection closes a connection after that many messages (relays often cap
	// it); 0 means DefaultMaxMessagesPerConnection.
	MaxMessagesPerConnection int
	// IdleTimeout drops a pooled connection that rested longer (relays drop idle clients after
	// a few minutes); 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// LocalName is the name given in EHLO after the connection is secured; "" means
	// DefaultLocalName. (go-smtp always greets as "localhost" before STARTTLS.)
	LocalName string
	// MessageIDDomain is the right-hand side of every Message-ID; "" means the DKIM domain, else
	// the sender address's domain, else DefaultMessageIDDomain.
	MessageIDDomain string
	// Clock dates messages and ages idle connections; nil means the system clock.
	Clock engine.Clock
	// Logger receives connection-level logs, each with the attribute provider = ID (added
	// here: the caller's logger must not carry it); nil discards them.
	Logger *slog.Logger
}

// DKIMConfig is a DKIM signing identity.
type DKIMConfig struct {
	// Domain is the d= tag: the domain publishing the key.
	Domain string
	// Selector is the s= tag: the key's record is Selector._domainkey.Domain.
	Selector string
	// PrivateKeyPEM is an RSA (PKCS #1 or #8) or Ed25519 (PKCS #8) private key in PEM.
	PrivateKeyPEM []byte
}

// settings is a validated Config with defaults applied and its derived values.
type settings struct {
	Config
	addr      string
	tlsConfig *tls.Config // nil for TLSNone
	signer    crypto.Signer
}

// normalized validates cfg, applies defaults and derives the dial address, TLS configuration
// and DKIM signer.
func (cfg Config) normalized() (*settings, error) {
	if cfg.Host == "" {
		return nil, errors.New("host is required")
	}
	if strings.ContainsAny(cfg.Host, ":/ ") && net.ParseIP(cfg.Host) == nil {
		return nil, fmt.Errorf("host %q must be a host name or an IP address, without scheme or port", cfg.Host)
	}
	switch cfg.TLS {
	case "":
		cfg.TLS = TLSStartTLS
	case TLSStartTLS, TLSImplicit:
	case TLSNone:
		if !isLoopbackHost(cfg.Host) {
			return nil, fmt.Errorf("tls none is allowed only towards a loopback host, not %q", cfg.Host)
		}
		if cfg.Port == 0 {
			return nil, errors.New("port is required with tls none")
		}
	default:
		return nil, fmt.Errorf("tls %q must be starttls, implicit or none", cfg.TLS)
	}
	if cfg.Port == 0 {
		cfg.Port = 587
		if cfg.TLS == TLSImplicit {
			cfg.Port = 465
		}
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("port %d out of range", cfg.Port)
	}
	if cfg.Username == "" && cfg.Password != "" {
		return nil, errors.New("a password without a username")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ConcurrencyLimit <= 0 {
		cfg.ConcurrencyLimit = DefaultConcurrencyLimit
	}
	if cfg.MaxMessagesPerConnection <= 0 {
		cfg.MaxMessagesPerConnection = DefaultMaxMessagesPerConnection
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.LocalName == "" {
		cfg.LocalName = DefaultLocalName
	}
	if strings.ContainsAny(cfg.LocalName, " \r\n") {
		return nil, fmt.Errorf("local name %q must be one word", cfg.LocalName)
	}
	if cfg.Clock == nil {
		cfg.Clock = engine.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Logger = cfg.Logger.With("provider", cfg.ID)
	s := &settings{Config: cfg, addr: net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))}
	if cfg.TLS != TLSNone {
		tc, err := tlsConfig(cfg.Host, cfg.TrustedCAFile)
		if err != nil {
			return nil, err
		}
		s.tlsConfig = tc
	}
	if d := cfg.DKIM; d != nil {
		if err := dkimkey.ValidName("domain", d.Domain); err != nil {
			return nil, fmt.Errorf("dkim: %w", err)
		}
		if err := dkimkey.ValidName("selector", d.Selector); err != nil {
			return nil, fmt.Errorf("dkim: %w", err)
		}
		signer, err := dkimkey.ParsePrivateKey(d.PrivateKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("dkim: %w", err)
		}
		s.signer = signer
	}
	return s, nil
}

// tlsConfig verifies the relay as host, against the CA bundle at caFile or the system roots.
func tlsConfig(host, caFile string) (*tls.Config, error) {
	tc := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pemBytes, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("trusted CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("trusted CA file %s holds no PEM certificate", caFile)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

// isLoopbackHost reports whether host is "localhost" or a loopback IP address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}
