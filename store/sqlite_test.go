package store_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/mattn/go-sqlite3"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/store"
	"switchboard/store/storetest"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// openAt opens (and migrates) the store at path, closed when the test ends.
func openAt(t *testing.T, path string, clock engine.Clock) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Config{Path: path, AuditKey: testKey, Clock: clock, Migrate: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openTemp opens a fresh store in the test's temporary folder.
func openTemp(t *testing.T, clock engine.Clock) *store.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "switchboard.db"), clock)
}

func TestSQLite(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, func(t *testing.T, clock engine.Clock) engine.Store { return openTemp(t, clock) })
}

func TestSQLiteEvents(t *testing.T) {
	t.Parallel()
	storetest.ExerciseEvents(t, func(t *testing.T, clock engine.Clock, subs []engine.Subscription) engine.Store {
		s, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "switchboard.db"),
			AuditKey: testKey, Clock: clock, Migrate: true, Subscriptions: subs})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// acceptance is a minimal valid acceptance of message id.
func acceptance(id string, now time.Time) engine.Acceptance {
	return engine.Acceptance{
		Idempotency: engine.IdempotencyRecord{Issuer: "iss", Subject: "sub", Key: "key-" + id,
			RequestHash: []byte("hash-" + id), Response: []byte(`{"id":"` + id + `"}`), ExpiresAt: now.Add(time.Hour)},
		Message: engine.Message{ID: id, Channel: engine.ChannelSMS, SenderProfile: "p", Provider: "gw",
			AccessProfile: "a", AcceptedAt: now, ExpiresAt: now.Add(time.Hour)},
		Payload: engine.Payload{Recipient: "+15550100", Parts: map[string]string{"text": "hi"}},
		Audit:   engine.AuditEntry{Event: "message.accepted", Actor: "caller"},
	}
}

func mustAccept(t *testing.T, s engine.Store, id string, now time.Time) {
	t.Helper()
	if r := s.Accept(context.Background(), []engine.Acceptance{acceptance(id, now)})[0]; r.Err != nil || r.MessageID != id {
		t.Fatalf("Accept(%s) = %+v", id, r)
	}
}

func TestOpenRefusesMissingOrUnmigrated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	missing := filepath.Join(dir, "missing.db")
	if _, err := store.Open(ctx, store.Config{Path: missing, AuditKey: testKey}); err == nil {
		t.Fatal("Open without Migrate created a database")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open without Migrate left a file behind: %v", err)
	}
	empty := filepath.Join(dir, "empty.db")
	raw, err := sqlx.Open("sqlite3", "file:"+empty+"?mode=rwc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE unrelated (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	_ = raw.Close()
	_, err = store.Open(ctx, store.Config{Path: empty, AuditKey: testKey})
	if !errors.Is(err, store.ErrNotMigrated) || !strings.Contains(err.Error(), "never migrated") {
		t.Fatalf("Open of an unmigrated database: %v, want ErrNotMigrated", err)
	}
}

func TestMigrateIsIdempotentAndRecorded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	clock := enginetest.NewFakeClock(storetest.Epoch())
	for range 2 {
		s, err := store.Open(context.Background(), store.Config{Path: path, AuditKey: testKey, Clock: clock, Migrate: true})
		if err != nil {
			t.Fatalf("Open(Migrate): %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.Open(context.Background(), store.Config{Path: path, AuditKey: testKey, Clock: clock})
	if err != nil {
		t.Fatalf("Open without Migrate on a migrated database: %v", err)
	}
	defer s.Close()
	if err := s.Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	raw := openRaw(t, s)
	var rows []struct {
		Version   int   `db:"version"`
		AppliedAt int64 `db:"applied_at"`
	}
	if err := raw.Select(&rows, `SELECT version, applied_at FROM schema_migrations ORDER BY version`); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("migrations", "sqlite", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded migrations found: %v", err)
	}
	if len(rows) != len(files) {
		t.Fatalf("schema_migrations = %+v, want each of the %d migrations once", rows, len(files))
	}
	sort.Strings(files)
	for i, r := range rows {
		// Files are named NNNN_name.sql; numbers may leave gaps.
		want, _ := strconv.Atoi(strings.SplitN(filepath.Base(files[i]), "_", 2)[0])
		if r.Version != want || r.AppliedAt != storetest.Epoch().UnixMilli() {
			t.Fatalf("schema_migrations = %+v, want the versions of %v applied once at the clock's time", rows, files)
		}
	}
	var mode string
	if err := raw.Get(&mode, `PRAGMA journal_mode`); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q, %v; want wal", mode, err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	s := openTemp(t, nil)
	raw := openRaw(t, s)
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, '0099_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(context.Background()); !errors.Is(err, store.ErrNotMigrated) {
		t.Fatalf("Ready on a newer schema: %v", err)
	}
	_, err := store.Open(context.Background(), store.Config{Path: s.Path(), AuditKey: testKey, Migrate: true})
	if !errors.Is(err, store.ErrNotMigrated) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

func TestOpenValidatesConfig(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	for name, cfg := range map[string]store.Config{
		"no audit key":     {Path: path, Migrate: true},
		"short audit key":  {Path: path, AuditKey: []byte("short"), Migrate: true},
		"bad synchronous":  {Path: path, AuditKey: testKey, Synchronous: "OFF", Migrate: true},
		"postgres not yet": {Driver: "postgres", Path: path, AuditKey: testKey, Migrate: true},
		"no path":          {AuditKey: testKey, Migrate: true},
		"memory":           {Path: ":memory:", AuditKey: testKey, Migrate: true},
	} {
		if s, err := store.Open(context.Background(), cfg); err == nil {
			_ = s.Close()
			t.Errorf("%s: Open succeeded", name)
		}
	}
	s, err := store.Open(context.Background(), store.Config{Path: path, AuditKey: testKey, Synchronous: "full", Migrate: true})
	if err != nil {
		t.Fatalf("Open with synchronous FULL: %v", err)
	}
	_ = s.Close()
}

// TestAbandonedStoreKeepsAcceptances reads an acceptance through a second Store while the
// first, never closed, still holds the file.
func TestAbandonedStoreKeepsAcceptances(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	first := openAt(t, path, nil)
	mustAccept(t, first, "m-1", storetest.Epoch())
	second := openAt(t, path, nil)
	if m, err := second.Message(context.Background(), "m-1"); err != nil || m.Dispatch != engine.DispatchQueued {
		t.Fatalf("Message through a second store = %+v, %v", m, err)
	}
}

// TestCrashKeepsAcceptances accepts in a child process that then dies by SIGKILL, without
// Close, and reads the acceptance back: an answered Accept is durable.
func TestCrashKeepsAcceptances(t *testing.T) {
	if path := os.Getenv("STORE_CRASH_CHILD_DB"); path != "" {
		crashChild(path)
		return
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKeepsAcceptances$")
	cmd.Env = append(os.Environ(), "STORE_CRASH_CHILD_DB="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v, want death by SIGKILL; output:\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "accepted m-crash") {
		t.Fatalf("child did not accept; output:\n%s", out.String())
	}
	s, err := store.Open(context.Background(), store.Config{Path: path, AuditKey: testKey})
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	defer s.Close()
	if m, err := s.Message(context.Background(), "m-crash"); err != nil || m.Dispatch != engine.DispatchQueued {
		t.Fatalf("Message after the crash = %+v, %v", m, err)
	}
	if rep, err := s.VerifyAudit(context.Background()); err != nil || !rep.OK() || rep.Records != 1 {
		t.Fatalf("audit after the crash = %+v, %v", rep, err)
	}
}

// crashChild accepts one message, reports it, and kills its own process.
func crashChild(path string) {
	s, err := store.Open(context.Background(), store.Config{Path: path, AuditKey: testKey, Migrate: true})
	if err != nil {
		os.Stdout.WriteString("open: " + err.Error() + "\n")
		os.Exit(2)
	}
	res := s.Accept(context.Background(), []engine.Acceptance{acceptance("m-crash", storetest.Epoch())})
	if res[0].Err != nil {
		os.Stdout.WriteString("accept: " + res[0].Err.Error() + "\n")
		os.Exit(2)
	}
	os.Stdout.WriteString("accepted m-crash\n")
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL cannot be caught: never reached
}

func TestReadyAndClose(t *testing.T) {
	t.Parallel()
	s := openTemp(t, nil)
	if err := s.Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Ready(context.Background()); !errors.Is(err, engine.ErrStoreClosed) {
		t.Fatalf("Ready after Close: %v", err)
	}
}

// openRaw opens a plain pool on s's file, closed when the test ends.
func openRaw(t *testing.T, s *store.Store) *sqlx.DB {
	t.Helper()
	raw, err := store.OpenRaw(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	return raw
}

// TestClaimLeavesDamagedPayload claims a page in which one payload no longer decodes: the
// others go out, and the damaged one is left to lapse.
func TestClaimLeavesDamagedPayload(t *testing.T) {
	t.Parallel()
	s := openTemp(t, nil)
	now := storetest.Epoch()
	mustAccept(t, s, "m-1", now)
	mustAccept(t, s, "m-2", now)
	raw := openRaw(t, s)
	if _, err := raw.Exec(`UPDATE payloads SET body = x'7b6e6f74' WHERE message_seq = (SELECT seq FROM messages WHERE id = 'm-1')`); err != nil {
		t.Fatal(err)
	}
	p, err := s.ClaimPage(context.Background(), now.Add(time.Second), engine.PageLimits{MaxEntries: 10, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(p.Claims) != 1 || p.Claims[0].Message.ID != "m-2" || p.Claims[0].Payload.Recipient != "+15550100" {
		t.Fatalf("ClaimPage = %+v, %v; want m-2 only", p, err)
	}
	if p.Bytes != p.Claims[0].Message.PayloadBytes {
		t.Fatalf("page bytes %d count the damaged payload", p.Bytes)
	}
	l, err := s.LapsedLeases(context.Background(), now.Add(2*time.Minute), 10)
	if err != nil || len(l) != 2 {
		t.Fatalf("LapsedLeases = %+v, %v; want both claims, m-1 among them", l, err)
	}
}

// TestInboxQuotaSurvivesRestart: the bytes a peer stored today are counted in the database, so
// a restarted process refuses what would take the peer over its daily quota.
func TestInboxQuotaSurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "switchboard.db")
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	put := func(s *store.Store, msgID string) engine.InboxResult {
		t.Helper()
		res, err := s.PutInbox(context.Background(), engine.InboxEntry{From: "12D3KooWpeer", Protocol: "/p/1",
			MessageID: msgID, ReceivedAt: now, Payload: make([]byte, 60), BytesPerDay: 100,
			Respond: func(id string) []byte { return []byte(id) }})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := openAt(t, path, enginetest.NewFakeClock(now))
	if res := put(first, "m-1"); res.OverQuota || res.Duplicate {
		t.Fatalf("first envelope: %+v", res)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again := openAt(t, path, enginetest.NewFakeClock(now))
	if res := put(again, "m-2"); !res.OverQuota {
		t.Fatalf("after a restart, 120 bytes of a 100-byte quota were taken: %+v", res)
	}
}
