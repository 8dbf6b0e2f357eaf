package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// serve as deploy/switchboard.service runs it: the runtime file takes its secrets from
// $CREDENTIALS_DIRECTORY (read-only copies, as LoadCredential makes them) and keeps the
// database in $STATE_DIRECTORY, as docs/operations.md ("Running under systemd") says, with no
// memory both writable and executable (MemoryDenyWriteExecute); and
// under Type=notify, READY=1 comes once the database is migrated and every listener answers,
// never before, and STOPPING=1 when a graceful stop begins.
func TestServeNotifiesTheServiceManager(t *testing.T) {
	t.Parallel()
	metricsAddr := loopbackAddr(t)
	credentials, state := t.TempDir(), t.TempDir()
	in := newServedStack(t, func(doc map[string]any, api string) {
		doc["listen"] = map[string]any{"api": api, "metrics": metricsAddr}
		doc["secrets"] = map[string]any{"file": map[string]any{"root": "${CREDENTIALS_DIRECTORY:-/etc/switchboard/credentials}"}}
		doc["database"] = map[string]any{"driver": "sqlite", "path": "${STATE_DIRECTORY:-/var/lib/switchboard}/switchboard.db"}
		doc["authentication"].(map[string]any)["oidc"].(map[string]any)["jwksFile"] = "${CREDENTIALS_DIRECTORY}/jwks.json"
	})
	// The secrets as LoadCredential copies them: read-only, in a folder of their own.
	secrets := in.file("secrets")
	entries, err := os.ReadDir(secrets)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(secrets, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(credentials, e.Name()), b, 0o400); err != nil {
			t.Fatal(err)
		}
	}

	// A unix socket path must stay under 108 bytes: t.TempDir's can be longer.
	sockDir, err := os.MkdirTemp("", "sbn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	in.env = append(in.env, "NOTIFY_SOCKET="+sock, "CREDENTIALS_DIRECTORY="+credentials, "STATE_DIRECTORY="+state)
	// With MemoryDenyWriteExecute as the unit sets it, where the kernel has it: the test binary
	// turns it on and executes serve in its place.
	if mdweSupported() {
		in.bin, in.env = os.Args[0], append(in.env, mdweLauncherEnv+"="+binary)
	} else {
		t.Log("this kernel has no PR_SET_MDWE: serve runs without memory-deny-write-execute")
	}
	in.start()

	if got := readNotification(t, conn); got != "READY=1" {
		t.Fatalf("first notification %q, want READY=1", got)
	}
	// Right at READY=1: the database is migrated (/ready says so) and both listeners answer.
	// The process is not asked again later: a notification sent before the listeners were
	// bound would meet a refused connection here.
	client := &http.Client{Timeout: 10 * time.Second}
	for _, url := range []string{in.api + "/ready", "http://" + metricsAddr + "/metrics"} {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET %s at READY=1: %v", url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s at READY=1: %d, want 200", url, resp.StatusCode)
		}
	}

	if _, err := os.Stat(filepath.Join(state, "switchboard.db")); err != nil {
		t.Fatalf("the database is not in $STATE_DIRECTORY: %v", err)
	}

	in.mu.Lock()
	proc, done := in.cmd.Process, in.done
	in.mu.Unlock()
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := readNotification(t, conn); got != "STOPPING=1" {
		t.Fatalf("notification after SIGTERM %q, want STOPPING=1", got)
	}
	<-done
	if code := in.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM, want 0", code)
	}
}

// readNotification reads one datagram from the notify socket, failing after a minute.
func readNotification(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	return string(buf[:n])
}
