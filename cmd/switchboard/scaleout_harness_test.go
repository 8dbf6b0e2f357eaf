package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"switchboard/engine/auth"
	"switchboard/providers/httpgw/mockgw"
)

// scaleOptions lays out one scale-out run.
type scaleOptions struct {
	bin       string // the switchboard binary the instances run
	instances int
	// databaseURL is a PostgreSQL URL (with its search_path); empty means SQLite in the dev folder.
	databaseURL string
	// concurrency is each instance's dispatch.concurrency.
	concurrency int
	gateway     mockgw.Options // CallbackURL and CallbackSecret are filled in
	// pkg makes the package the instances serve; nil means scaleOutPackage.
	pkg func(testing.TB) string
}

// scaleCluster is several `serve` processes on one database behind a round-robin proxy, with
// one mock gateway whose receipts come back through that proxy.
type scaleCluster struct {
	api       string // the proxy: what callers and the gateway talk to
	gw        *mockgw.Gateway
	instances []*scaleInstance
	// sender and operator are bearer tokens for case-system and operations-console.
	sender, operator string
	client           *http.Client
}

// newScaleCluster starts the gateway, the proxy and every instance, and returns once each
// instance answers /ready. Everything stops in tb's cleanup.
func newScaleCluster(tb testing.TB, opts scaleOptions) *scaleCluster {
	tb.Helper()
	makePkg := opts.pkg
	if makePkg == nil {
		makePkg = scaleOutPackage
	}
	dir := makePkg(tb)
	pkg, layout, _ := serveFixture(tb, dir)
	apis := make([]string, opts.instances)
	for i := range apis {
		apis[i] = loopbackAddr(tb)
	}
	proxy, err := startRoundRobin(apis)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(proxy.close)
	gwOpts := opts.gateway
	gwOpts.CallbackURL, gwOpts.CallbackSecret = proxy.url+"/v1/provider-callbacks/sms-gateway", layout.callbackSecret
	gwLogs := &syncBuffer{}
	gwOpts.Logger = slog.New(slog.NewTextHandler(gwLogs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gw := mockgw.New(gwOpts)
	gwURL, err := gw.Start("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = gw.Close()
		if tb.Failed() {
			tb.Logf("gateway warnings (tail):\n%s", tail(gwLogs.String(), 4000))
		}
	})
	session := devSession{API: "http://" + apis[0], Gateways: oneMockForAll(pkg, gwURL), Clients: clientsOf(pkg)}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		tb.Fatal(err)
	}
	c := &scaleCluster{api: proxy.url, gw: gw, client: &http.Client{Timeout: 30 * time.Second}}
	env := append(os.Environ(), "SWITCHBOARD_CONFIG=")
	if opts.databaseURL != "" {
		env = append(env, "DATABASE_URL="+opts.databaseURL)
	}
	for i, api := range apis {
		path := filepath.Join(layout.root, fmt.Sprintf("runtime-%d.yaml", i))
		if err := writeScaleRuntime(layout.runtimePath, path, api, opts); err != nil {
			tb.Fatal(err)
		}
		c.instances = append(c.instances, &scaleInstance{tb: tb, bin: opts.bin, runtime: path, env: env, api: "http://" + api, logs: &syncBuffer{}})
	}
	tb.Cleanup(func() {
		for i, in := range c.instances {
			in.kill()
			if tb.Failed() {
				tb.Logf("instance %d logs (tail):\n%s", i, tail(in.logs.String(), 8000))
			}
		}
	})
	// The first instance migrates the database alone; the others find it ready.
	for _, in := range c.instances {
		in.start()
		in.waitReady(90 * time.Second)
	}
	issuer, err := auth.LoadDevIssuer(layout.issuerKeyPath, devIssuer, devAudience)
	if err != nil {
		tb.Fatal(err)
	}
	c.sender, _ = issuer.Mint("case-system", []string{"messaging:send"}, 2*time.Hour, time.Now())
	c.operator, _ = issuer.Mint("operations-console", []string{"messaging:operate"}, 2*time.Hour, time.Now())
	return c
}

// scaleOutPackage copies the quickstart and makes its SMS path safe to send again after a
// crash: the provider is idempotentSubmit, the adapter passes the key as Idempotency-Key, the
// profile retries uncertain sends, and retries come after a second rather than half a minute.
func scaleOutPackage(tb testing.TB) string {
	tb.Helper()
	dir := quickstartCopy(tb)
	edit := func(rel string, pairs ...string) {
		path := filepath.Join(dir, rel)
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		text := string(b)
		for i := 0; i < len(pairs); i += 2 {
			if !strings.Contains(text, pairs[i]) {
				tb.Fatalf("%s: %q not found; the quickstart changed", rel, pairs[i])
			}
			text = strings.Replace(text, pairs[i], pairs[i+1], 1)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	edit("switchboard.yaml",
		"{id: sms-gateway, kind: http, idempotentSubmit: false}", "{id: sms-gateway, kind: http, idempotentSubmit: true}",
		"retry: {maximumAttempts: 5, initialDelaySeconds: 30, maximumDelaySeconds: 3600}\n    onUncertain: hold",
		"retry: {maximumAttempts: 10, initialDelaySeconds: 1, maximumDelaySeconds: 2}\n    onUncertain: retry")
	edit(filepath.Join("providers", "sms-gateway", "provider.yaml"),
		"headers: [content-type, x-request-id]", "headers: [content-type, x-request-id, idempotency-key]")
	edit(filepath.Join("providers", "sms-gateway", "adapter.js"),
		"  return {\n    target: \"messages\",", "  var request = {\n    target: \"messages\",",
		"  };\n}\n\nfunction retryAfterSeconds",
		"  };\n  if (message.idempotencyKey !== null) {\n    request.headers[\"idempotency-key\"] = message.idempotencyKey;\n  }\n  return request;\n}\n\nfunction retryAfterSeconds")
	return dir
}

// writeScaleRuntime derives one instance's runtime file from the dev one: its own API port, no
// metrics listener, the shared database, and a short lease so that a killed instance's claims
// come back within seconds.
func writeScaleRuntime(devRuntimePath, path, api string, opts scaleOptions) error {
	b, err := os.ReadFile(devRuntimePath)
	if err != nil {
		return fmt.Errorf("read the dev runtime file: %w", err)
	}
	var rt map[string]any
	if err := yaml.Unmarshal(b, &rt); err != nil {
		return fmt.Errorf("decode the dev runtime file: %w", err)
	}
	rt["listen"] = map[string]any{"api": api, "metrics": ""}
	rt["secrets"] = map[string]any{"file": map[string]any{"root": "./secrets"}, "env": map[string]any{}}
	if opts.databaseURL != "" {
		rt["database"] = map[string]any{"driver": "postgres", "urlRef": "secret:env/DATABASE_URL"}
	}
	rt["dispatch"] = map[string]any{"concurrency": max(opts.concurrency, 1), "batchSize": 100, "maxPayloadBytes": 10 << 20,
		"pollIntervalMilliseconds": 200, "leaseSeconds": 4}
	out, err := yaml.Marshal(rt)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// scaleInstance is one `serve` process (of binary bin, with env, or the test's environment when
// env is nil) on a fixed API port, restartable after SIGKILL.
type scaleInstance struct {
	tb                testing.TB
	bin, runtime, api string
	env               []string
	logs              *syncBuffer
	mu                sync.Mutex
	cmd               *exec.Cmd
	done              chan struct{}
}

func (p *scaleInstance) start() {
	p.tb.Helper()
	cmd := exec.Command(p.bin, "serve", "--config", p.runtime)
	cmd.Stdout, cmd.Stderr, cmd.Env = p.logs, p.logs, p.env
	if err := cmd.Start(); err != nil {
		p.tb.Fatalf("start serve: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
}

// kill sends SIGKILL and waits until the process is gone; it does nothing before start.
func (p *scaleInstance) kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// waitReady polls /ready until it answers 200, failing if the process exits or time runs out.
func (p *scaleInstance) waitReady(timeout time.Duration) {
	p.tb.Helper()
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			p.tb.Fatalf("serve %s exited:\n%s", p.runtime, tail(p.logs.String(), 8000))
		default:
		}
		if resp, err := http.Get(p.api + "/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.tb.Fatalf("serve %s not ready after %s:\n%s", p.runtime, timeout, tail(p.logs.String(), 8000))
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// loopbackAddr is a loopback host:port that was free a moment ago.
func loopbackAddr(tb testing.TB) string {
	tb.Helper()
	return fmt.Sprintf("127.0.0.1:%d", freePort(tb))
}
