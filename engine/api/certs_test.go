package api

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"testing"
	"time"

	"switchboard/engine/enginetest"
)

// tlsSetup serves the API's root handler over TLS with a CertReloader on a fake clock, from
// a pair written as server.crt and server.key in a temporary folder.
type tlsSetup struct {
	dir    string
	addr   string
	first  enginetest.CertPair
	clock  *enginetest.FakeClock
	certs  *CertReloader
	logs   *enginetest.Buffer
	server *HTTPServer
}

func newTLSSetup(t *testing.T) *tlsSetup {
	t.Helper()
	s := &tlsSetup{dir: t.TempDir(), clock: enginetest.NewFakeClock(time.Now()), logs: &enginetest.Buffer{}}
	s.first = enginetest.WriteCertPair(t, s.dir, "server", 100)
	var err error
	log := slog.New(slog.NewJSONHandler(s.logs, nil))
	if s.certs, err = NewCertReloader(s.first.CertFile, s.first.KeyFile, s.clock, log); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.server = NewHTTPServer(New(Config{Logger: slog.New(slog.DiscardHandler)}).Handler(), Limits{})
	done := make(chan error, 1)
	go func() { done <- s.server.Serve(tls.NewListener(ln, s.certs.Config())) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.server.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s
}

// client is a keep-alive HTTPS client that trusts every pair the test writes (each is
// self-signed, so a pair is trusted by its own certificate only: InsecureSkipVerify with the
// check done by peerSerial against the pairs the test knows).
func (s *tlsSetup) client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}}
}

// get answers GET /health over c and tells the certificate's serial and whether the connection
// was one already open.
func (s *tlsSetup) get(t *testing.T, c *http.Client) (serial int64, reused bool) {
	t.Helper()
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+s.addr+"/health", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET /health over TLS: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("GET /health: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	return resp.TLS.PeerCertificates[0].SerialNumber.Int64(), reused
}

func TestTLSHandshake(t *testing.T) {
	t.Parallel()
	s := newTLSSetup(t)
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		c, err := tls.Dial("tcp", s.addr, &tls.Config{RootCAs: s.first.Pool(), ServerName: "127.0.0.1", MinVersion: v, MaxVersion: v})
		if err != nil {
			t.Fatalf("%s handshake: %v", tls.VersionName(v), err)
		}
		if st := c.ConnectionState(); st.Version != v || st.NegotiatedProtocol != "" && st.NegotiatedProtocol != "http/1.1" {
			t.Errorf("%s: negotiated %s, protocol %q", tls.VersionName(v), tls.VersionName(st.Version), st.NegotiatedProtocol)
		}
		_ = c.Close()
	}
	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		c, err := tls.Dial("tcp", s.addr, &tls.Config{RootCAs: s.first.Pool(), ServerName: "127.0.0.1", MinVersion: v, MaxVersion: v})
		if err == nil {
			_ = c.Close()
			t.Fatalf("a %s handshake was accepted", tls.VersionName(v))
		}
		if !strings.Contains(err.Error(), "protocol version") {
			t.Errorf("%s refused with %v, want a protocol version alert", tls.VersionName(v), err)
		}
	}
	// A client that offers h2 gets HTTP/1.1: the wall reads the plain bytes of every answer.
	c, err := tls.Dial("tcp", s.addr, &tls.Config{RootCAs: s.first.Pool(), ServerName: "localhost", NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if p := c.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
		t.Fatalf("ALPN chose %q", p)
	}
	// The wall's own answers hold over TLS: a malformed header is a problem, not Go's text.
	if _, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("malformed request over TLS: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestTLSRotation(t *testing.T) {
	t.Parallel()
	s := newTLSSetup(t)
	kept := s.client()
	if serial, _ := s.get(t, kept); serial != 100 {
		t.Fatalf("first serial %d", serial)
	}

	// The files change; handshakes within CertCheckInterval of the last look still get the
	// loaded pair, the first one after it the new pair. The open connection stays open.
	second := enginetest.WriteCertPair(t, s.dir, "server", 101)
	if serial, _ := s.get(t, s.client()); serial != 100 {
		t.Fatalf("a handshake before the interval got serial %d", serial)
	}
	s.clock.Advance(CertCheckInterval)
	if serial, _ := s.get(t, s.client()); serial != 101 {
		t.Fatalf("after the interval a new connection got serial %d, want 101", serial)
	}
	if !s.certs.Current().Leaf.Equal(second.Cert) {
		t.Fatal("Current is not the second pair")
	}
	if serial, reused := s.get(t, kept); serial != 100 || !reused {
		t.Fatalf("the kept-alive connection: serial %d, reused %v; want the first connection, still open", serial, reused)
	}

	// A half-written rotation (a key that is not the certificate's) is logged and the second pair
	// stays, without a new try while the files stay as they are.
	other := enginetest.WriteCertPair(t, s.dir, "other", 102)
	mustCopy(t, other.KeyFile, second.KeyFile)
	s.clock.Advance(CertCheckInterval)
	if serial, _ := s.get(t, s.client()); serial != 101 {
		t.Fatalf("a pair that does not load replaced the certificate: serial %d", serial)
	}
	if n := strings.Count(s.logs.String(), `"after":"files changed"`); n != 1 {
		t.Fatalf("%d failure lines, want 1:\n%s", n, s.logs.String())
	}
	s.clock.Advance(CertCheckInterval)
	s.get(t, s.client())
	if n := strings.Count(s.logs.String(), `"after":"files changed"`); n != 1 {
		t.Fatalf("unchanged bad files were tried again: %d failure lines", n)
	}
	if err := s.certs.Reload(); err == nil || !strings.Contains(err.Error(), "private key does not match") {
		t.Fatalf("Reload of a mismatched pair: %v", err)
	}
	if serial, _ := s.get(t, s.client()); serial != 101 {
		t.Fatalf("a failed Reload replaced the certificate: serial %d", serial)
	}

	// A key file gone is said once too; once the files are back and right, they load.
	if err := os.Remove(second.KeyFile); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s.clock.Advance(CertCheckInterval)
		if serial, _ := s.get(t, s.client()); serial != 101 {
			t.Fatalf("with the key file gone: serial %d", serial)
		}
	}
	if n := strings.Count(s.logs.String(), `"after":"files changed"`); n != 2 {
		t.Fatalf("%d failure lines after the key file went, want 2:\n%s", n, s.logs.String())
	}
	enginetest.WriteCertPair(t, s.dir, "server", 104)
	s.clock.Advance(CertCheckInterval)
	if serial, _ := s.get(t, s.client()); serial != 104 {
		t.Fatalf("the files back: serial %d, want 104", serial)
	}
}

// TestTLSReloadForced: Reload reads files whose times and sizes did not change (a pair restored
// with its old times), which the periodic look cannot tell apart.
func TestTLSReloadForced(t *testing.T) {
	t.Parallel()
	s := newTLSSetup(t)
	certInfo, _ := os.Stat(s.first.CertFile)
	keyInfo, _ := os.Stat(s.first.KeyFile)
	third := enginetest.WriteCertPair(t, s.dir, "server", 103) // same byte length as 100
	for p, info := range map[string]os.FileInfo{third.CertFile: certInfo, third.KeyFile: keyInfo} {
		if now, _ := os.Stat(p); now.Size() != info.Size() {
			t.Fatalf("%s changed size: %d to %d", p, info.Size(), now.Size())
		}
		if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	s.clock.Advance(CertCheckInterval)
	if serial, _ := s.get(t, s.client()); serial != 100 {
		t.Fatalf("files with the same times and sizes were reloaded: serial %d", serial)
	}
	if err := s.certs.Reload(); err != nil {
		t.Fatal(err)
	}
	if serial, _ := s.get(t, s.client()); serial != 103 {
		t.Fatalf("after Reload, serial %d", serial)
	}
	if !strings.Contains(s.logs.String(), "TLS certificate reloaded") {
		t.Fatalf("no reload line:\n%s", s.logs.String())
	}
}

func TestNewCertReloaderRefusesBadPairs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := enginetest.WriteCertPair(t, dir, "a", 1)
	b := enginetest.WriteCertPair(t, dir, "b", 2)
	clock := enginetest.NewFakeClock(time.Now())
	for name, pair := range map[string][2]string{
		"missing":    {dir + "/none.crt", a.KeyFile},
		"mismatched": {a.CertFile, b.KeyFile},
		"swapped":    {a.KeyFile, a.CertFile},
	} {
		if _, err := NewCertReloader(pair[0], pair[1], clock, slog.New(slog.DiscardHandler)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func mustCopy(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
