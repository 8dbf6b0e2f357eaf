package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
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

// serveFixture is a copy of the quickstart bound to a mock gateway by a runtime file whose
// database lives in a folder serve must create, and the means to run serve on it.
type serveFixture struct {
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

func newServeFixture(t *testing.T) *serveFixture {
	t.Helper()
	q := newMockedQuickstart(t, quickstartCopy(t), mockgw.Options{ReceiptDelay: time.Millisecond})
	pkg, layout, api := q.pkg, q.layout, q.api
	if err := writeDevRuntime(layout, pkg, devSession{API: api, Gateways: oneMockForAll(pkg, q.gwURL), Clients: clientsOf(pkg)}); err != nil {
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
	f := &serveFixture{t: t, api: api, runtime: runtimePath, db: filepath.Join(layout.root, "state", "switchboard.db"),
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
func (f *serveFixture) serve() *scaleInstance {
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
func (f *serveFixture) load(workers int) (accepted func() []string, stop func()) {
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
func (f *serveFixture) switchboard(args ...string) (string, string, int) {
	f.t.Helper()
	return cli(f.t, append([]string{"--config", f.runtime}, args...)...)
}

// TestServeOwnsItsDatabase starts serve on a database whose folder does not exist: serve makes
// the folder 0700 and the files 0600, a second serve on it exits 3 with database.in-use and
// says what to do, and the command-line tools keep working beside it.
func TestServeOwnsItsDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve")
	}
	t.Parallel()
	f := newServeFixture(t)
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

// TestBackupUnderLoadRestores backs the database up while submissions go on against serve, then
// restores it as docs/operations.md says (stop serve, put the file in place of the database and
// its -wal and -shm, verify the journal, start): the journal verifies, every message answered
// 202 before the backup began is there, and serve takes and delivers a new one.
func TestBackupUnderLoadRestores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve")
	}
	t.Parallel()
	f := newServeFixture(t)
	first := f.serve()
	accepted, stop := f.load(8)
	waitFor(t, "100 acceptances", func() bool { return len(accepted()) >= 100 })
	before := accepted()
	target := filepath.Join(t.TempDir(), "switchboard-backup.db")
	out, stderr, code := f.switchboard("-o", "json", "backup", target)
	during := len(accepted()) - len(before)
	waitFor(t, "acceptances after the backup", func() bool { return len(accepted()) > len(before)+during })
	stop()
	if code != exitOK {
		t.Fatalf("backup: exit %d\n%s%s", code, out, stderr)
	}
	t.Logf("backup %s; %d accepted before it, %d while it ran", strings.TrimSpace(out), len(before), during)
	if rep := jsonOut(t, out); rep["ok"] != true || rep["file"] != target {
		t.Errorf("backup's report: %s", out)
	}
	wantFileMode(t, target, 0o600)

	first.kill()
	for _, p := range []string{f.db, f.db + "-wal", f.db + "-shm"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if err := os.Rename(target, f.db); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := f.switchboard("audit", "verify"); code != exitOK {
		t.Fatalf("audit verify on the restored database: exit %d\n%s%s", code, out, stderr)
	}
	restored := messageIDs(t, f.db)
	for _, id := range before {
		if !restored[id] {
			t.Fatalf("message %s, answered 202 before the backup, is not in the restored database", id)
		}
	}
	f.serve()
	if st := messageStatus(t, f.client, f.api, f.operator, before[0]); st == "" {
		t.Errorf("serve on the restored database does not show message %s", before[0])
	}
	next, stopNext := f.load(1)
	waitFor(t, "an acceptance on the restored database", func() bool { return len(next()) > 0 })
	stopNext()
	id := next()[0]
	waitFor(t, "its delivery", func() bool { return messageStatus(t, f.client, f.api, f.operator, id) == "delivered" })
}

// messageIDs reads the ids of every message in the SQLite database at path.
func messageIDs(t *testing.T, path string) map[string]bool {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id FROM messages`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBackupRefusals: backup refuses, with exit 1 and a stable code, a file that exists, the
// database or one of its files under any name, a missing folder and a PostgreSQL database; a
// database that cannot be opened is exit 3.
func TestBackupRefusals(t *testing.T) {
	t.Parallel()
	f := newServeFixture(t)
	dir := t.TempDir()
	if _, stderr, code := f.switchboard("backup", filepath.Join(dir, "new.db")); code != exitEnvironment ||
		!strings.Contains(stderr, "error[database.unreachable]") {
		t.Errorf("backup of a database that does not exist: exit %d\n%s", code, stderr)
	}
	if err := os.MkdirAll(filepath.Dir(f.db), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "existing.db")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.db")
	if err := os.Link(f.db, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ target, code string }{
		{existing, "backup.target-exists"},
		{f.db, "backup.target-is-database"},
		{f.db + "-wal", "backup.target-is-database"},
		{link, "backup.target-is-database"},
		{filepath.Join(dir, "missing", "new.db"), "backup.target-folder-missing"},
		{filepath.Join(existing, "new.db"), "backup.target-folder-missing"},
	} {
		out, _, code := f.switchboard("-o", "json", "backup", c.target)
		if code != exitRefused || !strings.Contains(out, `"code":"`+c.code+`"`) {
			t.Errorf("backup %s: exit %d, %s; want exit 1 with %s", c.target, code, out, c.code)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("the existing file now holds %q", b)
	}
	if _, err := os.Stat(f.db + "-wal"); err == nil {
		t.Error("a refused backup made the database's -wal")
	}

	if err := os.WriteFile(filepath.Join(filepath.Dir(f.runtime), "secrets", "database-url"),
		[]byte("postgres://postgres@127.0.0.1:1/none?sslmode=disable"), 0o600); err != nil {
		t.Fatal(err)
	}
	pg := editRuntime(t, f.runtime, "runtime-postgres.yaml", func(doc map[string]any) {
		doc["database"] = map[string]any{"driver": "postgres", "urlRef": "secret:file/database-url"}
	})
	_, stderr, code := cli(t, "--config", pg, "backup", filepath.Join(dir, "pg.db"))
	if code != exitRefused || !strings.Contains(stderr, "error[backup.unsupported-driver]") || !strings.Contains(stderr, "pg_dump") {
		t.Errorf("backup of PostgreSQL: exit %d\n%s", code, stderr)
	}
	if _, _, code := f.switchboard("backup"); code != exitUsage {
		t.Errorf("backup without FILE: exit %d, want 2", code)
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
