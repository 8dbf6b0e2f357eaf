package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrBackupUnsupported is returned by Backup on PostgreSQL, which its own tools back up
// (pg_dump, pg_basebackup; docs/operations.md, "Backups").
var ErrBackupUnsupported = errors.New("store: backup copies an SQLite database; back a PostgreSQL database up with its own tools (pg_dump, pg_basebackup)")

// BackupReport says what Backup wrote.
type BackupReport struct {
	Pages int   // database pages copied
	Bytes int64 // size of the copy
}

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
