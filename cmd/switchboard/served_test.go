package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"switchboard/engine/auth"
)

// servedStack is one `serve` process on a copy of the quickstart laid out as dev lays it out,
// with its runtime file edited by the test. Its gateway address leads nowhere: messages stay
// queued or retry, which is all the tests of its listeners need.
type servedStack struct {
	*scaleInstance
	addr   string // the API listener, host:port
	root   string // the dev folder, where the runtime file lives
	issuer *auth.DevIssuer
}

// newServedStack writes the runtime file (edit changes its document; listen.api is addr) and
// returns the stack, not started. SWITCHBOARD_LOG is debug, so that refusals are logged.
func newServedStack(t *testing.T, edit func(doc map[string]any, addr string)) *servedStack {
	t.Helper()
	dir := quickstartCopy(t)
	pkg, err := loadPackage(dir)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := prepareDevDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	addr := loopbackAddr(t)
	session := devSession{API: "http://" + addr, Gateways: oneMockForAll(pkg, "http://127.0.0.1:9"), Clients: clientsOf(pkg)}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		t.Fatal(err)
	}
	path := editRuntime(t, layout.runtimePath, "runtime-served.yaml", func(doc map[string]any) { edit(doc, addr) })
	issuer, err := auth.LoadDevIssuer(layout.issuerKeyPath, devIssuer, devAudience)
	if err != nil {
		t.Fatal(err)
	}
	s := &servedStack{addr: addr, root: layout.root, issuer: issuer, scaleInstance: &scaleInstance{tb: t, bin: binary, runtime: path,
		env: append(os.Environ(), "SWITCHBOARD_CONFIG=", "SWITCHBOARD_LOG=debug"), api: "http://" + addr, logs: &syncBuffer{}}}
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("serve logs (tail):\n%s", tail(s.logs.String(), 8000))
		}
	})
	return s
}

// token mints a dev token for client with scope.
func (s *servedStack) token(t *testing.T, client, scope string) string {
	t.Helper()
	tok, err := s.issuer.Mint(client, []string{scope}, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// alive reports whether the process still runs.
func (s *servedStack) alive() bool {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// file is a path in the dev folder.
func (s *servedStack) file(name string) string { return filepath.Join(s.root, name) }
