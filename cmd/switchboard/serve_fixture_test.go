package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/engine/auth"
	"switchboard/providers/httpgw/mockgw"
)

// freshServe is a copy of the quickstart bound to a mock gateway by a runtime file whose
// database lives in a folder serve must create, and the means to run serve on it.
type freshServe struct {
	t                  *testing.T
	api                string
	runtime            string
	db                 string // the database file, as serve opens it
	sender, operator   string // bearer tokens
	client             *http.Client
	body               []byte
	instances          []*scaleInstance
	instancesMu        sync.Mutex
	submissionsStarted int
}

func newFreshServe(t *testing.T) *freshServe {
	t.Helper()
	pkg, layout, api := serveFixture(t, quickstartCopy(t))
	gw := mockgw.New(mockgw.Options{CallbackURL: api + "/v1/provider-callbacks/sms-gateway", CallbackSecret: layout.callbackSecret,
		ReceiptDelay: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	gwURL, err := gw.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	if err := writeDevRuntime(layout, pkg, devSession{API: api, Gateways: oneMockForAll(pkg, gwURL), Clients: clientsOf(pkg)}); err != nil {
		t.Fatal(err)
	}
	runtimePath := editRuntime(t, layout.runtimePath, "runtime-fresh.yaml", func(doc map[string]any) {
		doc["database"] = map[string]any{"driver": "sqlite", "path": "./state/switchboard.db"}
		doc["listen"] = map[string]any{"api": strings.TrimPrefix(api, "http://"), "metrics": ""}
	})
	issuer, err := auth.LoadDevIssuer(layout.issuerKeyPath, devIssuer, devAudience)
	if err != nil {
		t.Fatal(err)
	}
	f := &freshServe{t: t, api: api, runtime: runtimePath, db: filepath.Join(layout.root, "state", "switchboard.db"),
		client: &http.Client{Timeout: 10 * time.Second}}
	f.sender, _ = issuer.Mint("case-system", []string{"messaging:send"}, 2*time.Hour, time.Now())
	f.operator, _ = issuer.Mint("operations-console", []string{"messaging:operate"}, 2*time.Hour, time.Now())
	f.body, _ = json.Marshal(smsBody(nil))
	t.Cleanup(func() {
		f.instancesMu.Lock()
		defer f.instancesMu.Unlock()
		for _, in := range f.instances {
			in.kill()
			if t.Failed() {
				t.Logf("serve logs (tail):\n%s", tail(in.logs.String(), 8000))
			}
		}
	})
	return f
}

// serve starts a serve process on the fixture's runtime file and waits until it is ready.
func (f *freshServe) serve() *scaleInstance {
	f.t.Helper()
	in := &scaleInstance{tb: f.t, bin: binary, runtime: f.runtime, api: f.api, logs: &syncBuffer{}}
	f.instancesMu.Lock()
	f.instances = append(f.instances, in)
	f.instancesMu.Unlock()
	in.start()
	in.waitReady(90 * time.Second)
	return in
}

// load submits messages from workers goroutines, each with its own idempotency key and retried
// until its 202, until stop is called; accepted returns the ids answered 202 so far.
func (f *freshServe) load(workers int) (accepted func() []string, stop func()) {
	var mu sync.Mutex
	var ids []string
	var errs []error
	done := make(chan struct{})
	var wg sync.WaitGroup
	prefix := fmt.Sprintf("load-%d-", f.submissionsStarted)
	f.submissionsStarted++
	c := crashLoad{client: f.client, api: f.api, token: f.sender, keyPrefix: prefix, body: f.body}
	for w := range workers {
		wg.Go(func() {
			for i := w; ; i += workers {
				select {
				case <-done:
					return
				default:
				}
				id, err := c.submit(i)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					ids = append(ids, id)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	accepted = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ids...)
	}
	return accepted, func() {
		close(done)
		wg.Wait()
		for _, err := range errs {
			f.t.Error(err)
		}
	}
}

// switchboard runs the binary on the fixture's runtime file.
func (f *freshServe) switchboard(args ...string) (string, string, int) {
	f.t.Helper()
	return cli(f.t, append([]string{"--config", f.runtime}, args...)...)
}

// wantFileMode fails the test unless the file at path has exactly the permission bits want.
func wantFileMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s has mode %04o, want %04o", filepath.Base(path), got, want)
	}
}

// waitUntil polls cond until it holds, failing the test after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
