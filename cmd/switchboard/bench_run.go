package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"switchboard/engine"
	"switchboard/engine/auth"
	"switchboard/engine/webhooks/receiver"
	"switchboard/providers/httpgw/mockgw"
	"switchboard/providers/peer"
)

// benchConfig is one `switchboard bench` run as its flags describe it.
type benchConfig struct {
	Messages       int
	Callers        int
	Channel        string // sms | email | peer | mixed
	GatewayLatency time.Duration
	ReceiptDelay   time.Duration
	Rate           float64 // submissions per second; 0 means a closed loop
	Concurrency    int     // dispatch.concurrency of the runtime file
	Package        string
	Out            string
	CPUProfile     string        // file for a CPU profile of the run, or ""
	Timeout        time.Duration // how long to wait for the last message to become final
	Webhooks       bool          // subscribe a local event receiver (bench_webhooks.go)
}

// benchEnv is the stack under test: a copy of the package in a temporary folder, the dev
// stand-ins, and the stack served in-process on a loopback listener.
type benchEnv struct {
	tmp       string
	apiURL    string
	stack     *stack
	gateways  []*mockgw.Gateway
	sink      *devSMTP
	companion *devCompanion
	cancel    context.CancelFunc
	runDone   chan error
	client    *http.Client
	sender    string             // sender token
	operator  string             // operator token ("" when the package has no operator client)
	receiver  *receiver.Receiver // the event endpoint of --webhooks, or nil
}

// standInLog is the stand-ins' logger: errors only, since a refused receipt is counted in the
// result rather than logged once per message (SWITCHBOARD_LOG=debug shows everything).
func standInLog(log *slog.Logger, debug bool) *slog.Logger {
	if debug {
		return log
	}
	return slog.New(errorsOnly{log.Handler()})
}

// errorsOnly passes records of level error and above to its handler.
type errorsOnly struct{ slog.Handler }

// Enabled reports whether a record of this level passes.
func (h errorsOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError && h.Handler.Enabled(ctx, l)
}

// WithAttrs keeps the filter on the derived handler.
func (h errorsOnly) WithAttrs(as []slog.Attr) slog.Handler {
	return errorsOnly{h.Handler.WithAttrs(as)}
}

// WithGroup keeps the filter on the derived handler.
func (h errorsOnly) WithGroup(name string) slog.Handler { return errorsOnly{h.Handler.WithGroup(name)} }

// startBench builds and starts the stack for a run. The caller must close the result.
func startBench(ctx context.Context, cfg benchConfig, log *slog.Logger) (*benchEnv, error) {
	tmp, err := os.MkdirTemp("", "switchboard-bench-")
	if err != nil {
		return nil, environment("bench.unwritable", os.TempDir(), err)
	}
	e := &benchEnv{tmp: tmp}
	fail := func(err error) (*benchEnv, error) {
		e.close()
		return nil, err
	}
	dir := filepath.Join(tmp, "package")
	if err := copyPackage(cfg.Package, dir); err != nil {
		return fail(environment("package.unreadable", cfg.Package, err))
	}
	pkg, err := loadPackage(dir)
	if err != nil {
		return fail(err)
	}
	layout, err := prepareDevDir(dir)
	if err != nil {
		return fail(err)
	}
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(environment("listener.failed", "127.0.0.1:0", err))
	}
	e.apiURL = "http://" + apiLn.Addr().String()
	session := devSession{API: e.apiURL, Clients: clientsOf(pkg), Gateways: map[string]string{}}
	for _, p := range pkg.Providers {
		switch p.Kind {
		case "http":
			// 64 receipt posters, as wide as the callers: with 16, delivery was bounded by 16
			// callbacks in flight, each waiting for a writer commit (2.7k/s, with a backlog of
			// receipts that put end-to-end p50 at 6.7 s), which a real gateway's webhook fan-out
			// does not impose.
			gw := mockgw.New(mockgw.Options{
				Latency: cfg.GatewayLatency, ReceiptDelay: cfg.ReceiptDelay, ReceiptWorkers: 64,
				CallbackURL: e.apiURL + "/v1/provider-callbacks/" + p.ID, CallbackSecret: layout.callbackSecret,
				Logger: standInLog(log, log.Enabled(ctx, slog.LevelDebug)).With("component", "mock-gateway", "provider", p.ID),
			})
			e.gateways = append(e.gateways, gw)
			gwURL, err := gw.Start("127.0.0.1:0")
			if err != nil {
				_ = apiLn.Close()
				return fail(environment("listener.failed", "mock gateway", err))
			}
			session.Gateways[p.ID] = strings.TrimSuffix(gwURL, "/")
		case "smtp":
			if e.sink != nil {
				continue
			}
			if e.sink, err = startSMTPSink(layout, pkg, log.With("component", "smtp-sink")); err != nil {
				_ = apiLn.Close()
				return fail(err)
			}
			session.SMTP, session.dkimDomain = e.sink.addr, e.sink.domain
		case "peer":
			if e.companion != nil {
				continue
			}
			if e.companion, err = startCompanion(ctx, layout, peer.DefaultProtocol, log.With("component", "companion-peer")); err != nil {
				_ = apiLn.Close()
				return fail(err)
			}
			session.Companion = &devPeer{PeerID: e.companion.id, Addrs: e.companion.addrs, Database: e.companion.db}
		}
	}
	if cfg.Webhooks {
		if e.receiver, err = startBenchReceiver(layout, &session); err != nil {
			_ = apiLn.Close()
			return fail(err)
		}
	}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		_ = apiLn.Close()
		return fail(err)
	}
	if err := setDispatchConcurrency(layout.runtimePath, cfg.Concurrency); err != nil {
		_ = apiLn.Close()
		return fail(environment("bench.unwritable", layout.runtimePath, err))
	}
	rt, pkg, err := loadRuntime(layout.runtimePath, func(string) string { return "" })
	if err != nil {
		_ = apiLn.Close()
		return fail(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	e.stack, err = buildStack(runCtx, rt, pkg, log, engine.SystemClock{})
	if err != nil {
		_ = apiLn.Close()
		return fail(err)
	}
	e.runDone = make(chan error, 1)
	go func() { e.runDone <- e.stack.run(runCtx, apiLn, nil) }()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns = cfg.Callers + 16
	transport.MaxIdleConnsPerHost = cfg.Callers + 16
	e.client = &http.Client{Transport: transport, Timeout: time.Minute}
	if err := e.mintTokens(layout.issuerKeyPath); err != nil {
		return fail(err)
	}
	if err := e.waitReady(ctx); err != nil {
		return fail(err)
	}
	return e, nil
}

// mintTokens signs a sender token and an operator token with the dev issuer's key.
func (e *benchEnv) mintTokens(keyPath string) error {
	issuer, err := auth.LoadDevIssuer(keyPath, devIssuer, devAudience)
	if err != nil {
		return fmt.Errorf("load the bench issuer: %w", err)
	}
	pkg := e.stack.pkg
	for _, p := range pkg.AccessProfiles {
		if len(p.Clients) == 0 {
			continue
		}
		var dst *string
		switch {
		case p.Role == "sender" && e.sender == "":
			dst = &e.sender
		case p.Role == "operator" && e.operator == "":
			dst = &e.operator
		default:
			continue
		}
		if *dst, err = issuer.Mint(p.Clients[0], p.RequiredScopes, 6*time.Hour, time.Now()); err != nil {
			return fmt.Errorf("mint a token for %s: %w", p.Clients[0], err)
		}
	}
	if e.sender == "" {
		return refused("bench.no-sender", "accessProfiles", "the package has no sender access profile with a client")
	}
	return nil
}

// waitReady polls /ready until it answers 200.
func (e *benchEnv) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.apiURL+"/ready", nil)
		if resp, err := e.client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return environment("bench.not-ready", e.apiURL, fmt.Errorf("the stack did not become ready: %w", ctx.Err()))
		case err := <-e.runDone:
			e.runDone <- err
			return fmt.Errorf("the stack stopped while starting: %w", err)
		case <-tick.C:
		}
	}
}

// close stops the stack, then the stand-ins, and removes the temporary folder.
func (e *benchEnv) close() {
	if e.cancel != nil {
		e.cancel()
	}
	if e.runDone != nil {
		<-e.runDone
	}
	for _, gw := range e.gateways {
		_ = gw.Close()
	}
	if e.sink != nil {
		_ = e.sink.sink.Close()
	}
	if e.companion != nil {
		e.companion.close()
	}
	if e.receiver != nil {
		_ = e.receiver.Close()
	}
	_ = os.RemoveAll(e.tmp)
}

// setDispatchConcurrency rewrites dispatch.concurrency in the runtime file writeDevRuntime wrote.
func setDispatchConcurrency(path string, n int) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	d, ok := doc["dispatch"].(map[string]any)
	if !ok {
		return errors.New("the runtime file has no dispatch section")
	}
	d["concurrency"] = n
	out, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return os.WriteFile(path, append([]byte("# Written by `switchboard bench`.\n"), out...), 0o600)
}

// copyPackage copies a package folder, without its .switchboard state, into dst.
func copyPackage(src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("cannot read the package folder: %w", err)
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() && (rel == ".switchboard" || strings.HasPrefix(rel, ".switchboard"+string(filepath.Separator))) {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
