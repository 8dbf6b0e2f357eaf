package bench

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
)

// Config is one `switchboard bench` run as its flags describe it.
type Config struct {
	Messages       int
	Callers        int
	Channel        string // sms | email | peer | mixed
	GatewayLatency time.Duration
	ReceiptDelay   time.Duration
	Rate           float64       // submissions per second of an open-loop run; 0 for a burst
	Duration       time.Duration // how long an open-loop run submits at Rate; 0 for a burst
	Concurrency    int           // dispatch.concurrency of the runtime file
	Package        string
	Out            string
	CPUProfile     string        // file for a CPU profile of the first serve process, or ""
	Timeout        time.Duration // how long to wait for the last message to become final
	Database       string        // a PostgreSQL URL, or "" for SQLite in the temporary folder
	Instances      int           // serve processes on the database
	Load           string        // "" (the bench's own callers) or "wrk" (an external load generator)
	Webhooks       bool          // subscribe a local event receiver (events.go)
	// Admission is the serve processes' admission policy: "give-way" (what serve runs, also
	// for "") or "off" (none), to compare a burst's completion with and without it.
	Admission string
	// PeerProtocol is how the peer provider sends: PeerOneShot (also for "") or PeerPooled;
	// PeerRelay sends to the companion peer through a circuit relay instead of directly.
	PeerProtocol string
	PeerRelay    bool
}

// peerProtocol is the run's peer protocol, PeerOneShot unless set; "" when no peer message is
// sent.
func (c Config) peerProtocol() string {
	switch {
	case c.Channel != "peer" && c.Channel != "mixed":
		return ""
	case c.PeerProtocol == "":
		return PeerOneShot
	}
	return c.PeerProtocol
}

// The values of Config.Admission.
const (
	// AdmissionGiveWay is the admission policy serve runs: during a burst, acceptance goes first.
	AdmissionGiveWay = "give-way"
	// AdmissionOff runs the serve processes without an admission policy.
	AdmissionOff = "off"
)

// admission is the policy the run's serve processes take, "give-way" unless set.
func (c Config) admission() string {
	if c.Admission == "" {
		return AdmissionGiveWay
	}
	return c.Admission
}

// benchEnv is the stack under test: a copy of the package in a temporary folder, the dev
// stand-ins, and the serve processes the command started on it.
type benchEnv struct {
	tmp      string
	apiURL   string
	stack    *Stack
	client   *http.Client
	sender   string // sender token
	operator string // operator token ("" when the package has no operator client)
	// database charges the PostgreSQL server's CPU to the run; nil on SQLite.
	database *databaseCPU
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

// startBench copies the package into a temporary folder and has the command wire the stack on
// it; it returns once the stack answers /ready. The caller must close the result.
func startBench(ctx context.Context, cfg Config, start StartStack, log *slog.Logger) (*benchEnv, error) {
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
	e.stack, err = start(ctx, StackSpec{
		Dir: dir, GatewayLatency: cfg.GatewayLatency, ReceiptDelay: cfg.ReceiptDelay,
		// 64 receipt posters, as wide as the callers: with 16, delivery was bounded by 16
		// callbacks in flight, each waiting for a writer commit (2.7k/s, with a backlog of
		// receipts that put end-to-end p50 at 6.7 s), which a real gateway's webhook fan-out
		// does not impose.
		ReceiptWorkers: 64,
		Webhooks:       cfg.Webhooks, Admission: cfg.admission(),
		PeerPooled: cfg.peerProtocol() == PeerPooled, PeerRelay: cfg.PeerRelay,
		Tune:     func(path string) error { return setDispatchConcurrency(path, cfg.Concurrency) },
		Database: cfg.Database, Instances: max(cfg.Instances, 1), CPUProfile: cfg.CPUProfile,
		Log: log, StandInLog: standInLog(log, log.Enabled(ctx, slog.LevelDebug)),
	})
	if err != nil {
		return fail(err)
	}
	if e.stack.Database != nil {
		e.database = newDatabaseCPU(e.stack.Database)
	}
	e.apiURL = e.stack.APIURL
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns = cfg.Callers + 16
	transport.MaxIdleConnsPerHost = cfg.Callers + 16
	e.client = &http.Client{Transport: transport, Timeout: time.Minute}
	if err := e.mintTokens(); err != nil {
		return fail(err)
	}
	if err := e.waitReady(ctx); err != nil {
		return fail(err)
	}
	return e, nil
}

// mintTokens signs a sender token and an operator token with the dev issuer's key.
func (e *benchEnv) mintTokens() error {
	pkg := e.stack.Package
	var err error
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
		if *dst, err = e.stack.Issuer.Mint(p.Clients[0], p.RequiredScopes, 6*time.Hour, time.Now()); err != nil {
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
		case err := <-e.stack.Stopped:
			return fmt.Errorf("the stack stopped while starting: %w", err)
		case <-tick.C:
		}
	}
}

// close stops the stack, then the stand-ins, and removes the temporary folder.
func (e *benchEnv) close() {
	if e.stack != nil {
		e.stack.Close()
	}
	_ = os.RemoveAll(e.tmp)
}

// setDispatchConcurrency rewrites dispatch.concurrency in the runtime file the command wrote.
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
