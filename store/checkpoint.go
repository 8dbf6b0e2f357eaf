package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// WAL checkpoints. SQLite's automatic checkpoint runs inside the commit that crosses its
// threshold: it copies the WAL into the database file and syncs it, and every caller waiting
// on that batch waits for the disk. The writer connection therefore turns automatic
// checkpoints off, and this goroutine runs PASSIVE checkpoints on a connection of its own,
// which never block the writer: after every checkpointEvery batches and once a second.

// checkpointEvery is how many committed batches the writer lets pass between pokes.
const checkpointEvery = 16

// checkpointIdle is how often the checkpointer runs when nobody pokes it.
const checkpointIdle = time.Second

// openCheckpointer opens the checkpointer's connection and turns the writer's automatic
// checkpoints off.
func (s *Store) openCheckpointer(ctx context.Context) error {
	cdb, err := sqlx.Open("sqlite3", s.cfg.checkpointDSN())
	if err != nil {
		return fmt.Errorf("store: open checkpointer: %w", err)
	}
	s.cdb = cdb
	cdb.SetMaxOpenConns(1)
	cdb.SetMaxIdleConns(1)
	if err := cdb.PingContext(ctx); err != nil {
		return fmt.Errorf("store: open checkpointer: %w", err)
	}
	if _, err := s.writers[0].conn.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
		return fmt.Errorf("store: turn off automatic checkpoints: %w", err)
	}
	return nil
}

// runCheckpointer checkpoints the WAL until Close.
func (s *Store) runCheckpointer() {
	defer close(s.upkeepDone)
	tick := time.NewTicker(checkpointIdle)
	defer tick.Stop()
	for {
		select {
		case <-s.stopping:
			return
		case <-s.checkpointPoke:
		case <-tick.C:
		}
		if _, err := s.cdb.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
			s.log.Warn("store: WAL checkpoint failed", "err", err)
		}
	}
}

// committed tells the checkpointer, every checkpointEvery batches, that the WAL has grown.
// Only the writer goroutine calls it.
func (s *Store) committed() {
	s.sinceCheckpoint++
	if s.sinceCheckpoint < checkpointEvery {
		return
	}
	s.sinceCheckpoint = 0
	select {
	case s.checkpointPoke <- struct{}{}:
	default: // a checkpoint is already due
	}
}
