package api

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"switchboard/engine"
)

// notReloaded is the log line of a pair that does not load.
const notReloaded = "the TLS certificate was not reloaded; the previous one is still served"

// CertCheckInterval is how often, at most, a handshake makes CertReloader look at its files.
const CertCheckInterval = 5 * time.Second

// CertReloader hands a TLS listener the certificate of a pair of files (runtime listen.tls)
// and reads the files again when they change: a handshake at least CertCheckInterval after the
// last look compares their modification times and sizes with those of the pair it loaded, and
// Reload (serve calls it on SIGHUP) reads them at once. Connections already open keep the
// certificate they shook hands with; only new handshakes see the new one. A pair that does not
// load (a half-written rotation, a key that does not match) is logged and the previous
// certificate is kept; files that stay as they are then are not tried again until they change
// or Reload is called. It is safe for concurrent use.
type CertReloader struct {
	certFile, keyFile string
	clock             engine.Clock
	log               *slog.Logger

	cert atomic.Pointer[tls.Certificate]

	mu      sync.Mutex
	checked time.Time  // the last look at the files
	stamp   pairStamps // the files as they were at the last load tried
}

// pairStamps is what a look at the files compares: modification times and sizes.
type pairStamps struct {
	certMod, keyMod   time.Time
	certSize, keySize int64
}

// NewCertReloader loads the pair and returns a reloader serving it. clock times the looks at
// the files; log receives the reloads.
func NewCertReloader(certFile, keyFile string, clock engine.Clock, log *slog.Logger) (*CertReloader, error) {
	c := &CertReloader{certFile: certFile, keyFile: keyFile, clock: clock, log: log}
	stamp, _ := c.stamps()
	if err := c.load(stamp); err != nil {
		return nil, err
	}
	c.checked = clock.Now()
	return c, nil
}

// Config is the TLS configuration of the API listener: TLS 1.2 at least, the reloader's
// certificate, HTTP/1.1 (the listener's wall, wall_conn.go, reads the plain bytes, which
// HTTP/2's framing would hide).
func (c *CertReloader) Config() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: c.getCertificate,
		NextProtos:     []string{"http/1.1"},
	}
}

// Reload reads the files now, changed or not. On failure the previous certificate stays and the
// error says why.
func (c *CertReloader) Reload() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checked = c.clock.Now()
	stamp, err := c.stamps()
	if err == nil {
		err = c.load(stamp)
	}
	if err != nil {
		c.log.Error(notReloaded, "after", "reload", "certFile", c.certFile, "keyFile", c.keyFile, "err", err)
	}
	return err
}

// Current is the certificate new handshakes get.
func (c *CertReloader) Current() *tls.Certificate { return c.cert.Load() }

func (c *CertReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.maybeReload()
	return c.cert.Load(), nil
}

// maybeReload looks at the files when the last look is CertCheckInterval old, and loads them
// when they differ from the last load tried. A handshake that finds another one looking does
// not wait for it.
func (c *CertReloader) maybeReload() {
	if !c.mu.TryLock() {
		return
	}
	defer c.mu.Unlock()
	now := c.clock.Now()
	if now.Sub(c.checked) < CertCheckInterval {
		return
	}
	c.checked = now
	stamp, err := c.stamps() // a file gone stamps as zero: said once, until it is back
	if stamp == c.stamp {
		return
	}
	if err == nil {
		err = c.load(stamp)
	} else {
		c.stamp = stamp
	}
	if err != nil {
		c.log.Error(notReloaded, "after", "files changed", "certFile", c.certFile, "keyFile", c.keyFile, "err", err)
	}
}

// stamps looks at both files.
func (c *CertReloader) stamps() (pairStamps, error) {
	ci, err := os.Stat(c.certFile)
	if err != nil {
		return pairStamps{}, fmt.Errorf("certificate file: %w", err)
	}
	ki, err := os.Stat(c.keyFile)
	if err != nil {
		return pairStamps{}, fmt.Errorf("key file: %w", err)
	}
	return pairStamps{certMod: ci.ModTime(), keyMod: ki.ModTime(), certSize: ci.Size(), keySize: ki.Size()}, nil
}

// load reads the pair and serves it; stamp (taken before the read, so that a change during it
// is seen at the next look) is remembered whether or not it loads.
func (c *CertReloader) load(stamp pairStamps) error {
	c.stamp = stamp
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("load the TLS certificate and key: %w", err)
	}
	old := c.cert.Swap(&cert)
	if old != nil {
		c.log.Info("TLS certificate reloaded", "certFile", c.certFile, "notAfter", NotAfter(&cert))
	}
	return nil
}

// NotAfter is the end of the validity of cert's leaf, or the zero time when it was not parsed.
func NotAfter(cert *tls.Certificate) time.Time {
	if cert == nil || cert.Leaf == nil {
		return time.Time{}
	}
	return cert.Leaf.NotAfter
}
