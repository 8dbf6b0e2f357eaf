package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeOwnsItsDatabase starts serve on a database whose folder does not exist: serve makes
// the folder 0700 and the files 0600, a second serve on it exits 3 with database.in-use and
// says what to do, and the command-line tools keep working beside it.
func TestServeOwnsItsDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve")
	}
	t.Parallel()
	f := newFreshServe(t)
	first := f.serve()
	wantFileMode(t, filepath.Dir(f.db), 0o700)
	for _, p := range []string{f.db, f.db + "-wal", f.db + "-shm", f.db + ".lock"} {
		wantFileMode(t, p, 0o600)
	}

	_, stderr, code := f.switchboard("serve")
	if code != exitEnvironment || !strings.Contains(stderr, "error[database.in-use]") ||
		!strings.Contains(stderr, "PostgreSQL") || !strings.Contains(stderr, "Scale-out") {
		t.Fatalf("second serve: exit %d, stderr:\n%s\nwant exit 3 with database.in-use and what to do", code, stderr)
	}
	out, _, code := f.switchboard("-o", "json", "serve")
	if d := jsonOut(t, out); code != exitEnvironment || !strings.Contains(out, `"code":"database.in-use"`) || d["ok"] != false {
		t.Errorf("second serve -o json: exit %d, %s", code, out)
	}
	first.waitReady(10 * time.Second)

	for _, args := range [][]string{{"audit", "verify"}, {"messages", "list"}, {"retention", "erase-expired"}} {
		if out, stderr, code := f.switchboard(args...); code != exitOK {
			t.Errorf("%v beside serve: exit %d\n%s%s", args, code, out, stderr)
		}
	}
}

// TestSecondDevRefused: a second dev on a folder whose dev runs exits 3 with database.in-use
// before it touches the first one's session.
func TestSecondDevRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dev")
	}
	t.Parallel()
	dir := quickstartCopy(t)
	first := startDev(t, dir)
	sessionPath := filepath.Join(dir, ".switchboard", "dev", "session.json")
	before, err := os.ReadFile(sessionPath)
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, code := cli(t, "dev", dir, "--port", "0")
	if code != exitEnvironment || !strings.Contains(stderr, "error[database.in-use]") {
		t.Fatalf("second dev: exit %d\n%s", code, stderr)
	}
	if after, _ := os.ReadFile(sessionPath); string(after) != string(before) {
		t.Errorf("the second dev rewrote the first one's session:\n%s\nnow\n%s", before, after)
	}
	if resp, err := http.Get(first.session.API + "/ready"); err != nil || resp.StatusCode != 200 {
		t.Errorf("the first dev after the refusal: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}
