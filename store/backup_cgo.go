//go:build cgo

package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mattn/go-sqlite3"
)

// backupRetry is how long Backup waits before it tries again a step that found the source busy
// (only while another connection recovers the WAL).
const backupRetry = 50 * time.Millisecond

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
