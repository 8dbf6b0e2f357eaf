package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mattn/go-sqlite3"
)

// ErrBackupUnsupported is returned by Backup on PostgreSQL, which its own tools back up
// (pg_dump, pg_basebackup; docs/operations.md, "Backups").
var ErrBackupUnsupported = errors.New("store: backup copies an SQLite database; back a PostgreSQL database up with its own tools (pg_dump, pg_basebackup)")

// BackupReport says what Backup wrote.
type BackupReport struct {
	Pages int   // database pages copied
	Bytes int64 // size of the copy
}

// backupRetry is how long Backup waits before it tries again a step that found the source busy
// (only while another connection recovers the WAL).
const backupRetry = 50 * time.Millisecond

// Backup writes a consistent copy of the SQLite database to target, a new file (mode 0600),
// with SQLite's online backup API: the whole database is copied in one step, from one read
// snapshot of a read connection, so that writers here and in other processes go on meanwhile
// and the copy holds exactly the transactions committed before the step began. The copy is
// written beside target under a temporary name and linked to target once complete, so target
// is never a partial copy; a target that exists is refused with an error that satisfies
// errors.Is(err, fs.ErrExist). Copying all at once matters: a backup taken in steps starts
// over whenever another connection writes in between.
func (s *Store) Backup(ctx context.Context, target string) (BackupReport, error) {
	if s.cfg.Driver == "postgres" {
		return BackupReport{}, ErrBackupUnsupported
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".partial-*")
	if err != nil {
		return BackupReport{}, fmt.Errorf("store: backup: %w", err)
	}
	partial := tmp.Name()
	defer func() { _ = os.Remove(partial) }() // after the link, only its second name
	if err := tmp.Chmod(privateFile); err != nil {
		_ = tmp.Close()
		return BackupReport{}, fmt.Errorf("store: backup: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return BackupReport{}, fmt.Errorf("store: backup: %w", err)
	}
	pages, err := s.copyInto(ctx, partial)
	if err != nil {
		return BackupReport{}, err
	}
	size, err := syncFile(partial)
	if err != nil {
		return BackupReport{}, fmt.Errorf("store: backup: %w", err)
	}
	if err := os.Link(partial, target); err != nil {
		return BackupReport{}, fmt.Errorf("store: backup: %w", err)
	}
	if err := syncFolder(filepath.Dir(target)); err != nil {
		return BackupReport{}, fmt.Errorf("store: backup: %w", err)
	}
	return BackupReport{Pages: pages, Bytes: size}, nil
}

// copyInto copies the database into the empty SQLite file at path with the online backup API
// and returns the pages copied.
func (s *Store) copyInto(ctx context.Context, path string) (int, error) {
	ddb, err := sql.Open("sqlite3", fileURI(path)+"?mode=rw")
	if err != nil {
		return 0, fmt.Errorf("store: backup: open the copy: %w", err)
	}
	defer func() { _ = ddb.Close() }()
	dconn, err := ddb.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: backup: open the copy: %w", err)
	}
	defer func() { _ = dconn.Close() }()
	sconn, err := s.rdb.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: backup: open the database: %w", err)
	}
	defer func() { _ = sconn.Close() }()
	var pages int
	err = dconn.Raw(func(d any) error {
		return sconn.Raw(func(src any) error {
			b, err := d.(*sqlite3.SQLiteConn).Backup("main", src.(*sqlite3.SQLiteConn), "main")
			if err != nil {
				return err
			}
			if err := stepAll(ctx, b); err != nil {
				_ = b.Finish()
				return err
			}
			pages = b.PageCount()
			return b.Finish()
		})
	})
	if err != nil {
		return 0, fmt.Errorf("store: backup: copy %s: %w", s.cfg.Path, err)
	}
	return pages, nil
}

// stepAll runs the backup to its end in one step, trying again while the source is busy.
func stepAll(ctx context.Context, b *sqlite3.SQLiteBackup) error {
	for {
		done, err := b.Step(-1)
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backupRetry):
		}
	}
}

// syncFile flushes the file at path to the disk and returns its size.
func syncFile(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	if err := f.Sync(); err != nil {
		return 0, err
	}
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// syncFolder flushes the folder at dir, so that a name just made in it survives a crash.
func syncFolder(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	return f.Sync()
}
