package store

import (
	"context"
	"fmt"
	"strings"
)

// scrubbedTables are the tables retention erases from.
var scrubbedTables = []string{"payloads", "messages", "attempts", "idempotency", "receipts", "peer_inbox", "peer_idempotency", "webhook_events"}

// Scrub clears what an erasure run left of the erased bytes in the database files
// (engine.Scrubber); retention calls it after a run that erased anything.
//
// On SQLite, deleted content is already overwritten with zeros (secure_delete), but the
// write-ahead log still holds earlier copies of the pages: Scrub checkpoints it into the
// database file and truncates it to nothing (wal_checkpoint(TRUNCATE)), which holds off new
// writes until the readers of older snapshots have finished.
//
// On PostgreSQL, Scrub runs VACUUM on the erased tables, so that the dead row versions holding
// erased values become free space that new rows overwrite. VACUUM does not overwrite them
// itself, and neither it nor anything here reaches the write-ahead log, replicas or backups
// (docs/operations.md says what does).
func (s *Store) Scrub(ctx context.Context) error {
	if s.d.name == "postgres" {
		// On a connection of the read pool: the writers hold every connection of theirs. VACUUM
		// waits only for an ANALYZE of the same table (its lock conflicts with no read or write).
		if _, err := s.rdb.ExecContext(ctx, `VACUUM `+strings.Join(scrubbedTables, ", ")); err != nil {
			return fmt.Errorf("store: vacuum the erased tables: %w", err)
		}
		return nil
	}
	var busy, logFrames, checkpointed int
	row := s.cdb.QueryRowxContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	if err := row.Scan(&busy, &logFrames, &checkpointed); err != nil {
		return fmt.Errorf("store: checkpoint and truncate the write-ahead log: %w", err)
	}
	if busy != 0 {
		return fmt.Errorf("store: the write-ahead log could not be emptied: a reader or the writer held it past the busy timeout")
	}
	return nil
}
