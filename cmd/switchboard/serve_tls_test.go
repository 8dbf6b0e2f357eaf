package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"switchboard/engine/enginetest"
)

// TestServeTLS runs serve with listen.tls and rotates its certificate with SIGHUP: the process
// stays up, new connections get the new certificate, a connection kept alive across the rotation
// keeps working, and a pair that does not load keeps the one served.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	s := newServedStack(t, func(doc map[string]any, addr string) {
		doc["listen"] = map[string]any{"api": addr, "metrics": "", "tls": map[string]any{"certFile": "./api.crt", "keyFile": "./api.key"}}
	})
	first := enginetest.WriteCertPair(t, s.root, "api", 100)
	pool := x509.NewCertPool()
	pool.AddCert(first.Cert)
	newClient := func() *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	}
	get := func(c *http.Client) (serial int64, reused bool, err error) {
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+s.addr+"/ready", nil)
		resp, err := c.Do(req)
		if err != nil {
			return 0, false, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, reused, &statusError{resp.StatusCode}
		}
		return resp.TLS.PeerCertificates[0].SerialNumber.Int64(), reused, nil
	}
	s.start()
	waitFor(t, s, "serve to answer over TLS", func() bool { _, _, err := get(newClient()); return err == nil })

	// Plain HTTP on the TLS listener is no answer.
	if resp, err := http.Get("http://" + s.addr + "/ready"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered on the TLS listener")
		}
	}

	kept := newClient()
	if serial, _, err := get(kept); err != nil || serial != 100 {
		t.Fatalf("first certificate: %d, %v", serial, err)
	}
	// The rotation keeps the files' times and sizes, so only SIGHUP can tell it happened.
	stamps := map[string]os.FileInfo{}
	for _, p := range []string{first.CertFile, first.KeyFile} {
		stamps[p], _ = os.Stat(p)
	}
	second := enginetest.WriteCertPair(t, s.root, "api", 101)
	pool.AddCert(second.Cert)
	for p, info := range stamps {
		if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	s.signal(t, syscall.SIGHUP)
	waitFor(t, s, "the second certificate after SIGHUP", func() bool { serial, _, err := get(newClient()); return err == nil && serial == 101 })
	if serial, reused, err := get(kept); err != nil || serial != 100 || !reused {
		t.Fatalf("the connection kept alive across the rotation: serial %d, reused %v, %v", serial, reused, err)
	}

	// A key that is not the certificate's: logged, and the second pair stays.
	other := enginetest.WriteCertPair(t, t.TempDir(), "other", 102)
	key, _ := os.ReadFile(other.KeyFile)
	if err := os.WriteFile(second.KeyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	s.signal(t, syscall.SIGHUP)
	waitFor(t, s, "the failed reload's log line", func() bool { return strings.Contains(s.logs.String(), "was not reloaded") })
	if serial, _, err := get(newClient()); err != nil || serial != 101 {
		t.Fatalf("after a failed reload: serial %d, %v", serial, err)
	}
	if !s.alive() {
		t.Fatal("serve exited")
	}
}

// TestTLSPairRefused: check and serve refuse a missing or mismatched pair with the runtime's
// codes and exit codes, naming the member.
func TestTLSPairRefused(t *testing.T) {
	t.Parallel()
	s := newServedStack(t, func(doc map[string]any, addr string) {
		doc["listen"] = map[string]any{"api": addr, "metrics": "", "tls": map[string]any{"certFile": "./a.crt", "keyFile": "./b.key"}}
	})
	enginetest.WriteCertPair(t, s.root, "a", 1)
	enginetest.WriteCertPair(t, s.root, "b", 2)
	_, errOut, code := cli(t, "check", "--config", s.runtime)
	if code != 1 || !strings.Contains(errOut, "error[runtime.invalid]") || !strings.Contains(errOut, "listen.tls.keyFile: is not the private key of the certificate in certFile") {
		t.Fatalf("check with a mismatched pair: exit %d\n%s", code, errOut)
	}
	_, errOut, code = cli(t, "serve", "--config", s.runtime)
	if code != 1 || !strings.Contains(errOut, "listen.tls.keyFile") {
		t.Fatalf("serve with a mismatched pair: exit %d\n%s", code, errOut)
	}
	if err := os.Remove(s.file("a.crt")); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = cli(t, "check", "--config", s.runtime)
	if code != 3 || !strings.Contains(errOut, "error[runtime.unreadable]") || !strings.Contains(errOut, "listen.tls.certFile") {
		t.Fatalf("check with a missing certificate: exit %d\n%s", code, errOut)
	}
}

type statusError struct{ status int }

func (e *statusError) Error() string { return http.StatusText(e.status) }

// signal sends sig to the serve process.
func (s *servedStack) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// waitFor polls cond until it holds, failing when serve exits or a minute passes.
func waitFor(t *testing.T, s *servedStack, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if !s.alive() {
			t.Fatalf("serve exited while waiting for %s", what)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
