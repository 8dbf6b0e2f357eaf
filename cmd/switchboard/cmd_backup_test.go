package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupUnderLoadRestores backs the database up while submissions go on against serve, then
// restores it as docs/operations.md says (stop serve, put the file in place of the database and
// its -wal and -shm, verify the journal, erase what expired, start): the journal verifies,
// every message answered 202 before the backup began is there, and serve takes and delivers a
// new one.
func TestBackupUnderLoadRestores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve")
	}
	t.Parallel()
	f := newFreshServe(t)
	first := f.serve()
	accepted, stop := f.load(8)
	waitUntil(t, "100 acceptances", func() bool { return len(accepted()) >= 100 })
	before := accepted()
	target := filepath.Join(t.TempDir(), "switchboard-backup.db")
	out, stderr, code := f.switchboard("-o", "json", "backup", target)
	during := len(accepted()) - len(before)
	waitUntil(t, "acceptances after the backup", func() bool { return len(accepted()) > len(before)+during })
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
	for _, args := range [][]string{{"audit", "verify"}, {"retention", "erase-expired", "--apply"}} {
		if out, stderr, code := f.switchboard(args...); code != exitOK {
			t.Fatalf("%v on the restored database: exit %d\n%s%s", args, code, out, stderr)
		}
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
	waitUntil(t, "an acceptance on the restored database", func() bool { return len(next()) > 0 })
	stopNext()
	id := next()[0]
	waitUntil(t, "its delivery", func() bool { return messageStatus(t, f.client, f.api, f.operator, id) == "delivered" })
}

// TestBackupRefusals: backup refuses, with exit 1 and a stable code, a file that exists, the
// database or one of its files under any name, a missing folder and a PostgreSQL database; a
// database that cannot be opened is exit 3.
func TestBackupRefusals(t *testing.T) {
	t.Parallel()
	f := newFreshServe(t)
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
