package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"switchboard/cmd/switchboard/internal/bench"
)

// benchServe is the system under test of a bench run: one or more `switchboard serve`
// processes of this binary, each with its own runtime file (its own API and metrics ports),
// on one database. Running them as processes of their own is what lets the bench charge their
// CPU time, and only theirs, to the messages (the callers and stand-ins stay in the bench).
type benchServe struct {
	instances []*benchInstance
	runtimes  []string // the instances' runtime files
	// stopped delivers an error when an instance exits by itself, before stop.
	stopped  chan error
	stopping chan struct{}
	stopOnce sync.Once
}

// benchInstance is one serve process.
type benchInstance struct {
	api, metrics string // host:port of its listeners
	cmd          *exec.Cmd
	done         chan struct{}
	logs         *tailBuffer
}

// startServe writes one runtime file per instance beside devRuntime (same package, secrets
// and stand-ins; the API address of apis, one per instance, and a metrics port of its own;
// the database of databaseURL when set) and starts the instances one after the other, each
// once the previous is ready: the first migrates the database alone. env is added to the instances' environment (DATABASE_URL); cpuProfile,
// when set, makes the first instance write a CPU profile of its run there; admission, when set,
// is every instance's admission policy (serve's hidden --admission flag).
func startServe(ctx context.Context, devRuntime string, apis []string, databaseURL, cpuProfile, admission string) (*benchServe, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the switchboard binary: %w", err)
	}
	s := &benchServe{stopped: make(chan error, len(apis)), stopping: make(chan struct{})}
	for i, api := range apis {
		in := &benchInstance{api: api, logs: &tailBuffer{max: 16 << 10}}
		if in.metrics, err = freeLoopbackAddr(); err != nil {
			s.stop()
			return nil, err
		}
		path := filepath.Join(filepath.Dir(devRuntime), fmt.Sprintf("runtime-%d.yaml", i))
		if err := writeInstanceRuntime(devRuntime, path, in.api, in.metrics, databaseURL != ""); err != nil {
			s.stop()
			return nil, environment("bench.unwritable", path, err)
		}
		s.runtimes = append(s.runtimes, path)
		args := []string{"serve", "--config", path}
		if cpuProfile != "" && i == 0 {
			args = append(args, "--cpuprofile", cpuProfile)
		}
		if admission != "" {
			args = append(args, "--admission", admission)
		}
		in.cmd = exec.Command(bin, args...)
		in.cmd.Env = append(os.Environ(), "SWITCHBOARD_CONFIG=", "SWITCHBOARD_LOG=warn")
		if databaseURL != "" {
			in.cmd.Env = append(in.cmd.Env, "DATABASE_URL="+databaseURL)
		}
		in.cmd.Stdout, in.cmd.Stderr = in.logs, in.logs
		if err := in.cmd.Start(); err != nil {
			s.stop()
			return nil, environment("bench.serve-failed", bin, err)
		}
		in.done = make(chan struct{})
		go func(in *benchInstance) {
			err := in.cmd.Wait()
			close(in.done)
			select {
			case <-s.stopping:
			default:
				s.stopped <- fmt.Errorf("serve %s exited: %v\n%s", in.api, err, in.logs.String())
			}
		}(in)
		s.instances = append(s.instances, in)
		if err := in.waitReady(ctx, 90*time.Second); err != nil {
			s.stop()
			return nil, err
		}
	}
	return s, nil
}

// writeInstanceRuntime derives an instance's runtime file from the one dev wrote: its own
// listeners and, with postgres, the database named by DATABASE_URL.
func writeInstanceRuntime(devRuntime, path, api, metrics string, postgres bool) error {
	raw, err := os.ReadFile(devRuntime)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("decode %s: %w", devRuntime, err)
	}
	doc["listen"] = map[string]any{"api": api, "metrics": metrics}
	if postgres {
		doc["database"] = map[string]any{"driver": "postgres", "urlRef": "secret:env/DATABASE_URL"}
		secrets, _ := doc["secrets"].(map[string]any)
		if secrets == nil {
			secrets = map[string]any{}
		}
		secrets["env"] = map[string]any{}
		doc["secrets"] = secrets
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return os.WriteFile(path, append([]byte("# Written by `switchboard bench`.\n"), out...), 0o600)
}

// waitReady polls /ready until it answers 200, failing when the process exits first.
func (in *benchInstance) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if resp, err := client.Get("http://" + in.api + "/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-in.done:
			return environment("bench.serve-failed", in.api, fmt.Errorf("serve exited while starting:\n%s", in.logs.String()))
		case <-ctx.Done():
			return environment("bench.not-ready", in.api, fmt.Errorf("serve did not become ready: %w\n%s", ctx.Err(), in.logs.String()))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pids lists the instances' process ids.
func (s *benchServe) pids() []int {
	out := make([]int, 0, len(s.instances))
	for _, in := range s.instances {
		out = append(out, in.cmd.Process.Pid)
	}
	return out
}

// apis lists the instances' API addresses (host:port).
func (s *benchServe) apis() []string {
	out := make([]string, 0, len(s.instances))
	for _, in := range s.instances {
		out = append(out, in.api)
	}
	return out
}

// metric sums a counter or gauge without labels over every instance's /metrics.
func (s *benchServe) metric(ctx context.Context, name string) (float64, error) {
	total := 0.0
	for _, in := range s.instances {
		v, err := scrapeMetric(ctx, "http://"+in.metrics+"/metrics", name)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, nil
}

// scrapeMetric reads one unlabelled sample from a Prometheus text exposition; 0 when absent.
func scrapeMetric(ctx context.Context, url, name string) (float64, error) {
	var v float64
	var perr error
	err := scrapeLines(ctx, url, func(line string) bool {
		rest, ok := strings.CutPrefix(line, name+" ")
		if ok {
			v, perr = strconv.ParseFloat(strings.TrimSpace(rest), 64)
		}
		return !ok
	})
	if err == nil {
		err = perr
	}
	return v, err
}

// scrapeLines reads a Prometheus text exposition and hands each line to each, until it returns
// false.
func scrapeLines(ctx context.Context, url string, each func(line string) bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if !each(sc.Text()) {
			return nil
		}
	}
	return sc.Err()
}

// histogram sums the buckets of histogram name over every label and instance.
func (s *benchServe) histogram(ctx context.Context, name string) ([]bench.Bucket, error) {
	sums := map[float64]float64{}
	for _, in := range s.instances {
		if err := scrapeBuckets(ctx, "http://"+in.metrics+"/metrics", name, sums); err != nil {
			return nil, err
		}
	}
	out := make([]bench.Bucket, 0, len(sums))
	for le, n := range sums {
		out = append(out, bench.Bucket{UpperBound: le, Count: n})
	}
	return out, nil
}

// scrapeBuckets adds the samples of name's buckets in a Prometheus text exposition to sums,
// by upper bound.
func scrapeBuckets(ctx context.Context, url, name string, sums map[float64]float64) error {
	return scrapeLines(ctx, url, func(line string) bool {
		line, ok := strings.CutPrefix(line, name+"_bucket{")
		if !ok {
			return true
		}
		labels, value, ok := strings.Cut(line, "} ")
		_, le, found := strings.Cut(labels, `le="`)
		if !ok || !found {
			return true
		}
		le, _, _ = strings.Cut(le, `"`)
		bound, err := strconv.ParseFloat(le, 64) // "+Inf" parses as infinity
		if err != nil {
			return true
		}
		if n, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			sums[bound] += n
		}
		return true
	})
}

// stop ends every instance with SIGTERM (a graceful stop) and waits, killing one that has
// not exited after 30 seconds.
func (s *benchServe) stop() { s.stopOnce.Do(s.stopAll) }

func (s *benchServe) stopAll() {
	close(s.stopping)
	for _, in := range s.instances {
		_ = in.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, in := range s.instances {
		select {
		case <-in.done:
		case <-time.After(30 * time.Second):
			_ = in.cmd.Process.Kill()
			<-in.done
		}
	}
}

// freeLoopbackAddr is a loopback host:port that was free a moment ago.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", environment("listener.failed", "127.0.0.1:0", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// tailBuffer keeps the last max bytes written to it, for the logs of a failed instance.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

var _ io.Writer = (*tailBuffer)(nil)

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
