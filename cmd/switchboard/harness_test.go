package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"switchboard/engine/enginetest"
	"switchboard/packages"
)

// binary is the switchboard binary built once for the integration tests.
var binary string

func TestMain(m *testing.M) {
	if out := os.Getenv(rssLauncherEnv); out != "" {
		os.Exit(launchForRSS(out, os.Args[1:]))
	}
	if program := os.Getenv(mdweLauncherEnv); program != "" {
		os.Exit(launchUnderMDWE(program, os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "switchboard-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "switchboard")
	build := exec.Command("go", "build", "-race", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// quickstartCopy copies examples/quickstart into a temporary folder (dev writes into it).
func quickstartCopy(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "quickstart")
	copyTree(t, filepath.Join("..", "..", "examples", "quickstart"), dst)
	return dst
}

// copyTree copies the folder src to dst, without a .switchboard folder (dev's files).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if strings.HasPrefix(rel, ".switchboard") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// serveFixture loads the package in dir, writes its dev folder, and picks a free loopback address
// for the API: what a test needs to write a runtime file (writeDevRuntime) and run serve on it.
func serveFixture(t testing.TB, dir string) (*packages.Package, devPaths, string) {
	t.Helper()
	pkg, err := loadPackage(dir)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := prepareDevDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return pkg, layout, fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
}

// cli runs the binary to completion and returns stdout, stderr and the exit code.
func cli(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "SWITCHBOARD_CONFIG=")
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// devStack is a running `switchboard dev` process.
type devStack struct {
	t       *testing.T
	dir     string
	cmd     *exec.Cmd
	session devSession
	logs    *syncBuffer
	done    chan struct{}
}

// syncBuffer collects a process's output while the test reads it.
type syncBuffer = enginetest.Buffer

// startDev starts `switchboard dev DIR --port 0` and waits until /ready answers 200.
func startDev(t *testing.T, dir string) *devStack {
	t.Helper()
	return startDevWith(t, dir, nil)
}

// startDevWith is startDev with more environment variables (NAME=value) and arguments.
func startDevWith(t *testing.T, dir string, env []string, args ...string) *devStack {
	t.Helper()
	_ = os.Remove(filepath.Join(dir, ".switchboard", "dev", "session.json"))
	s := &devStack{t: t, dir: dir, logs: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(binary, append([]string{"dev", dir, "--port", "0"}, args...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	s.cmd.Env = append(append(os.Environ(), "SWITCHBOARD_LOG=debug"), env...)
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start dev: %v", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("dev logs:\n%s", s.logs.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			t.Fatalf("dev exited early:\n%s", s.logs.String())
		default:
		}
		if b, err := os.ReadFile(filepath.Join(dir, ".switchboard", "dev", "session.json")); err == nil {
			if json.Unmarshal(b, &s.session) == nil && s.session.API != "" {
				if resp, err := http.Get(s.session.API + "/ready"); err == nil {
					resp.Body.Close()
					if resp.StatusCode == 200 {
						return s
					}
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("dev did not become ready:\n%s", s.logs.String())
	return nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *devStack) kill() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-s.done
}

// stop sends SIGTERM and returns the exit code.
func (s *devStack) stop() int {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		s.t.Fatal("dev did not stop after SIGTERM")
	}
	return s.cmd.ProcessState.ExitCode()
}

// token mints a dev token for a client.
func (s *devStack) token(client string) string {
	s.t.Helper()
	out, errOut, code := cli(s.t, "dev", "token", client, s.dir)
	if code != 0 {
		s.t.Fatalf("dev token: exit %d: %s", code, errOut)
	}
	return strings.TrimSpace(out)
}

// do sends one API request and decodes a JSON answer into out (when not nil).
func (s *devStack) do(method, path, token, key string, body any, out any) (*http.Response, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, s.session.API+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp, raw
}

// waitStatus polls a message until its status is one of want, or fails after the deadline.
func (s *devStack) waitStatus(token, id string, timeout time.Duration, want ...string) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	var view map[string]any
	for time.Now().Before(deadline) {
		resp, _ := s.do("GET", "/v1/messages/"+id, token, "", nil, &view)
		if resp.StatusCode == 200 {
			for _, w := range want {
				if view["status"] == w {
					return view
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("message %s: status %v, want one of %v", id, view["status"], want)
	return nil
}
