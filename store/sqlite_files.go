package store

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// The files of an SQLite database hold recipients and rendered content: they are the owner's
// alone. SQLite creates a database file 0644 and its -wal and -shm with the mode of the
// database file, whatever the umask, so the store creates the database file 0600 itself before
// SQLite opens it, and its folder 0700 when it is missing (docs/operations.md, "The SQLite
// files").

// privateFile is the mode of the database file, its -wal and -shm, its lock file and a backup.
const privateFile fs.FileMode = 0o600

// privateFolder is the mode of a database folder the store creates.
const privateFolder fs.FileMode = 0o700

// ErrInUse is returned by Open for an SQLite database that another process owns (Config.Owner).
var ErrInUse = errors.New("store: the database is in use by another process")

// sqliteCompanions are the suffixes of the files SQLite keeps beside a database in WAL mode.
var sqliteCompanions = []string{"-wal", "-shm"}

// createSQLiteFolder creates the folder of the database at path, 0700, when it is missing.
func createSQLiteFolder(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil // there, or unreachable: opening the database says which
	}
	if err := os.MkdirAll(dir, privateFolder); err != nil {
		return fmt.Errorf("store: create the database folder %s: %w", dir, err)
	}
	// MkdirAll's mode passes through the umask; the folder's own mode must not.
	if err := os.Chmod(dir, privateFolder); err != nil {
		return fmt.Errorf("store: create the database folder %s: %w", dir, err)
	}
	return nil
}

// prepareSQLiteFiles creates the database file at path 0600 when it is missing, and takes the
// group's and others' access away from an existing database file and its -wal and -shm. A file
// whose mode cannot be changed (one this user does not own) is logged and left as it is: it
// was usable before, and the operator decides who owns it.
func prepareSQLiteFiles(path string, log *slog.Logger) error {
	if err := createPrivate(path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("store: create the database file %s: %w", path, err)
	}
	for _, p := range append([]string{path}, companionsOf(path)...) {
		if err := makePrivate(p); err != nil {
			log.Warn("store: the group or others may read a database file, and its mode cannot be changed", "file", p, "err", err)
		}
	}
	return nil
}

// createPrivate creates the empty file path, mode 0600 whatever the umask; fs.ErrExist when it
// exists.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, privateFile)
	if err != nil {
		return err
	}
	if err := f.Chmod(privateFile); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// makePrivate clears the group and other permission bits of path, if it exists.
func makePrivate(path string) error {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.Mode().Perm()&0o077 == 0 {
		return nil
	}
	return os.Chmod(path, info.Mode().Perm()&^0o077)
}

// companionsOf is the -wal and -shm file names of the database at path.
func companionsOf(path string) []string {
	out := make([]string, 0, len(sqliteCompanions))
	for _, s := range sqliteCompanions {
		out = append(out, path+s)
	}
	return out
}

// claimSQLiteFiles prepares the files of the database before SQLite opens it: with
// Config.Migrate it creates the folder, then with Config.Owner it takes the owner lock, then
// with Config.Migrate it creates the database file or makes the existing ones private.
func (s *Store) claimSQLiteFiles() error {
	if s.cfg.Migrate {
		if err := createSQLiteFolder(s.cfg.Path); err != nil {
			return err
		}
	}
	if s.cfg.Owner {
		f, err := lockOwner(s.cfg.Path)
		if err != nil {
			return err
		}
		s.owner = f
	}
	if s.cfg.Migrate {
		return prepareSQLiteFiles(s.cfg.Path, s.log)
	}
	return nil
}

// CheckOwner reports, with ErrInUse, whether another Store owns the SQLite database at path
// (Config.Owner), for a caller that has work to do before it opens the database as its owner.
// It takes the owner lock and lets it go at once: only Open's lock makes a process the owner.
func CheckOwner(path string) error {
	f, err := lockOwner(path)
	if err != nil {
		return err
	}
	if f != nil {
		return f.Close()
	}
	return nil
}
