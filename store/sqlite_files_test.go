package store_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"switchboard/engine/enginetest"
	"switchboard/store"
)

// wantMode fails the test unless the file at path has exactly the permission bits want.
func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s has mode %04o, want %04o", filepath.Base(path), got, want)
	}
}

// TestOpenCreatesPrivateFiles opens a database whose folder does not exist, under a umask that
// takes nothing away: the folder is created 0700 and the database, its -wal, its -shm and its
// lock file are 0600. (Not parallel: the umask belongs to the whole process.)
func TestOpenCreatesPrivateFiles(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "switchboard.db")
	s, err := store.Open(context.Background(), store.Config{Path: path, AuditKey: testKey, Migrate: true, Owner: true})
	if err != nil {
		t.Fatalf("Open in a missing folder: %v", err)
	}
	defer s.Close()
	mustAccept(t, s, "m-1", time.Now())
	wantMode(t, dir, 0o700)
	for _, p := range []string{path, path + "-wal", path + "-shm", path + ".lock"} {
		wantMode(t, p, 0o600)
	}
}

// TestOpenMakesExistingFilesPrivate reopens a database whose files others could read: the
// database, its -wal and its -shm lose the group's and others' access.
func TestOpenMakesExistingFilesPrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "switchboard.db")
	first := openAt(t, path, nil)
	mustAccept(t, first, "m-1", time.Now())
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	openAt(t, path, nil)
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		wantMode(t, p, 0o600)
	}
}

// TestOwnerRefusesASecondOwner opens one database as its owner twice: the second is refused
// with ErrInUse naming the owner's process (and CheckOwner says so), a Store that is not the
// owner still opens, and once the owner closes another may own it.
func TestOwnerRefusesASecondOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "switchboard.db")
	cfg := store.Config{Path: path, AuditKey: testKey, Migrate: true, Owner: true}
	owner, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("first owner: %v", err)
	}
	second, err := store.Open(ctx, cfg)
	if !errors.Is(err, store.ErrInUse) {
		if second != nil {
			second.Close()
		}
		t.Fatalf("second owner: %v, want ErrInUse", err)
	}
	if want := "process " + strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("refusal %q does not name %s", err, want)
	}
	if err := store.CheckOwner(path); !errors.Is(err, store.ErrInUse) {
		t.Errorf("CheckOwner beside the owner: %v, want ErrInUse", err)
	}
	tool, err := store.Open(ctx, store.Config{Path: path, AuditKey: testKey})
	if err != nil {
		t.Fatalf("a Store beside the owner: %v", err)
	}
	mustAccept(t, tool, "m-1", time.Now())
	if err := tool.Close(); err != nil {
		t.Fatal(err)
	}
	if err := owner.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.CheckOwner(path); err != nil {
		t.Errorf("CheckOwner once the owner closed: %v", err)
	}
	next, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("owner after the first closed: %v", err)
	}
	if _, err := next.Message(ctx, "m-1"); err != nil {
		t.Errorf("the tool's message: %v", err)
	}
	_ = next.Close()
}

// TestBackupWhileWriting backs a database up while another goroutine keeps accepting: the copy
// is 0600, alone in its folder, verifies, and holds every message accepted before the backup
// began. A second backup to the same file is refused.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := enginetest.NewFakeClock(time.Now())
	s := openTemp(t, clock)
	for i := range 200 {
		mustAccept(t, s, fmt.Sprintf("before-%d", i), clock.Now())
	}
	stop := make(chan struct{})
	writing := make(chan int)
	go func() {
		n := 0
		defer func() { writing <- n }()
		for ; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			mustAccept(t, s, fmt.Sprintf("during-%d", n), clock.Now())
		}
	}()
	dir := t.TempDir()
	target := filepath.Join(dir, "backup.db")
	rep, err := s.Backup(ctx, target)
	close(stop)
	during := <-writing
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	t.Logf("backup: %+v; %d accepted meanwhile", rep, during)
	wantMode(t, target, 0o600)
	if info, _ := os.Stat(target); rep.Pages == 0 || info.Size() != rep.Bytes {
		t.Errorf("report %+v does not match the file (%d bytes)", rep, info.Size())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the backup's folder holds %v, want the backup alone", entries)
	}
	if _, err := s.Backup(ctx, target); !errors.Is(err, fs.ErrExist) {
		t.Errorf("backup over an existing file: %v, want fs.ErrExist", err)
	}
	copied, err := store.Open(ctx, store.Config{Path: target, AuditKey: testKey})
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer copied.Close()
	if rep, err := copied.VerifyAudit(ctx); err != nil || !rep.OK() {
		t.Fatalf("the backup's journal: %+v, %v", rep, err)
	}
	for i := range 200 {
		if _, err := copied.Message(ctx, fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatalf("before-%d is not in the backup: %v", i, err)
		}
	}
}
