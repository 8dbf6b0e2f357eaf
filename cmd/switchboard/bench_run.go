package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"switchboard/engine"
	"switchboard/engine/auth"
	"switchboard/packages"
	"switchboard/providers/httpgw/mockgw"
	"switchboard/providers/peer"
	"switchboard/store"
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
	CPUProfile     string        // file for a CPU profile of the (first) serve process, or ""
	Timeout        time.Duration // how long to wait for the last message to become final
	Database       string        // a PostgreSQL URL, or "" for SQLite in the temporary folder
	Instances      int           // serve processes on the database
	Load           string        // "" (the bench's own callers) or "wrk" (an external load generator)
}

// benchEnv is the stack under test: a copy of the package in a temporary folder, the dev
// stand-ins in this process, and the serve processes that run the stack.
type benchEnv struct {
	tmp       string
	apiURL    string // the first instance's API
	pkg       *packages.Package
	serve     *benchServe
	db        *benchDatabase // nil on SQLite
	reader    *store.Store   // the bench's own handle on the database, for the queue figures
	callbacks *roundRobin    // spreads the receipts over the instances
	gateways  []*mockgw.Gateway
	sink      *devSMTP
	companion *devCompanion
	client    *http.Client
	sender    string // sender token
	operator  string // operator token ("" when the package has no operator client)
	// wrkLatency is the accept latency wrk measured, in a run with --load wrk.
	wrkLatency wrkLatency
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
	e.pkg = pkg
	layout, err := prepareDevDir(dir)
	if err != nil {
		return fail(err)
	}
	if cfg.Database != "" {
		if e.db, err = openBenchDatabase(ctx, cfg.Database); err != nil {
			return fail(err)
		}
	}
	// The instances' API ports are chosen when they start; receipts go through a round-robin
	// balancer in this process, whose backends are filled in then.
	if e.callbacks, err = startRoundRobin(nil); err != nil {
		return fail(environment("listener.failed", "127.0.0.1:0", err))
	}
	session := devSession{API: e.callbacks.url, Clients: clientsOf(pkg), Gateways: map[string]string{}}
	for _, p := range pkg.Providers {
		switch p.Kind {
		case "http":
			// 64 receipt posters, as wide as the callers: with 16, delivery was bounded by 16
			// callbacks in flight, each waiting for a writer commit (2.7k/s, with a backlog of
			// receipts that put end-to-end p50 at 6.7 s), which a real gateway's webhook fan-out
			// does not impose.
			gw := mockgw.New(mockgw.Options{
				Latency: cfg.GatewayLatency, ReceiptDelay: cfg.ReceiptDelay, ReceiptWorkers: 64,
				CallbackURL: e.callbacks.url + "/v1/provider-callbacks/" + p.ID, CallbackSecret: layout.callbackSecret,
				Logger: standInLog(log, log.Enabled(ctx, slog.LevelDebug)).With("component", "mock-gateway", "provider", p.ID),
			})
			e.gateways = append(e.gateways, gw)
			gwURL, err := gw.Start("127.0.0.1:0")
			if err != nil {
				return fail(environment("listener.failed", "mock gateway", err))
			}
			session.Gateways[p.ID] = strings.TrimSuffix(gwURL, "/")
		case "smtp":
			if e.sink != nil {
				continue
			}
			if e.sink, err = startSMTPSink(layout, pkg, log.With("component", "smtp-sink")); err != nil {
				return fail(err)
			}
			session.SMTP, session.dkimDomain = e.sink.addr, e.sink.domain
		case "peer":
			if e.companion != nil {
				continue
			}
			if e.companion, err = startCompanion(ctx, layout, peer.DefaultProtocol, log.With("component", "companion-peer")); err != nil {
				return fail(err)
			}
			session.Companion = &devPeer{PeerID: e.companion.id, Addrs: e.companion.addrs, Database: e.companion.db}
		}
	}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		return fail(err)
	}
	if err := setDispatchConcurrency(layout.runtimePath, cfg.Concurrency); err != nil {
		return fail(environment("bench.unwritable", layout.runtimePath, err))
	}
	dbURL := ""
	if e.db != nil {
		dbURL = e.db.serveURL
	}
	if e.serve, err = startServe(ctx, layout.runtimePath, cfg.Instances, dbURL, cfg.CPUProfile); err != nil {
		return fail(err)
	}
	e.callbacks.setBackends(e.serve.apis())
	e.apiURL = "http://" + e.serve.apis()[0]
	if e.reader, err = e.openReader(ctx, e.serve.runtimes[0], dbURL, log); err != nil {
		return fail(err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns = cfg.Callers + 16
	transport.MaxIdleConnsPerHost = cfg.Callers + 16
	e.client = &http.Client{Transport: transport, Timeout: time.Minute}
	if err := e.mintTokens(layout.issuerKeyPath); err != nil {
		return fail(err)
	}
	return e, nil
}

// openReader opens the bench's own handle on the run's database (as the operator tools do
// while serve runs), for the queue figures it polls: read through the API they would be
// charged to the instances.
func (e *benchEnv) openReader(ctx context.Context, runtimePath, dbURL string, log *slog.Logger) (*store.Store, error) {
	getenv := func(k string) string {
		if k == "DATABASE_URL" {
			return strings.Replace(dbURL, "application_name="+benchServeApp, "application_name=switchboard-bench", 1)
		}
		return ""
	}
	rt, _, err := loadRuntime(runtimePath, getenv)
	if err != nil {
		return nil, err
	}
	st, _, err := openStore(ctx, rt, engine.SystemClock{}, standInLog(log, false), false)
	return st, err
}

// mintTokens signs a sender token and an operator token with the dev issuer's key.
func (e *benchEnv) mintTokens(keyPath string) error {
	issuer, err := auth.LoadDevIssuer(keyPath, devIssuer, devAudience)
	if err != nil {
		return fmt.Errorf("load the bench issuer: %w", err)
	}
	pkg := e.pkg
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

// close stops the serve processes, then the stand-ins, drops the run's schema and removes
// the temporary folder.
func (e *benchEnv) close() {
	if e.reader != nil {
		_ = e.reader.Close()
	}
	if e.serve != nil {
		e.serve.stop()
	}
	if e.callbacks != nil {
		e.callbacks.close()
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
	if e.db != nil {
		e.db.close()
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
