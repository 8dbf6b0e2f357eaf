package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jmoiron/sqlx"
)

// Planner statistics (PostgreSQL). The claim's oversized count and the receipt lookups are
// planned from table statistics, which autovacuum gathers at most once a minute and only after a
// tenth of a table changed. Until then a fresh or fast-growing queue has none, and the planner
// guessed wrong: measured on 5,000 queued messages, the oversized count scanned the whole due
// index (4.2 ms a claim, most of the first writer's time, holding delivery at about 630 per
// second) where, once analyzed, it reads the size index (0.04 ms). The analyzer refreshes the
// statistics of a hot table once it has changed by as many rows as it holds. Each message
// changes its row four times (insert, claim, finish, receipt), so a growing queue is analyzed
// each time it grew by about a third: a handful of times from empty to a million, where a
// threshold of a fifth of the table analyzed the messages table every round of a busy
// instance (8 ANALYZE of 100 ms for 5,000 messages, 160 µs of database CPU per message).

// analyzeEvery is how often the analyzer looks at the statistics.
const analyzeEvery = 5 * time.Second

// analyzeLockKey names the analyzer's schema-scoped lock (ASCII "sban"; schemaTryLock).
const analyzeLockKey int32 = 0x7362616e

// analyzeMinChanges is how many rows of a table must have changed before it is analyzed.
const analyzeMinChanges = 1000

// staleTables lists the hot tables whose statistics are stale: at least analyzeMinChanges rows,
// and as many as the table holds, changed since their last analysis.
const staleTables = `SELECT relname FROM pg_stat_user_tables
	WHERE schemaname = current_schema() AND relname IN ('messages', 'attempts', 'receipts', 'idempotency')
	AND n_mod_since_analyze >= $1 AND n_mod_since_analyze >= n_live_tup`

// runAnalyzer refreshes stale statistics until Close.
func (s *Store) runAnalyzer() {
	defer close(s.upkeepDone)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // Close cancels an ANALYZE in progress
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	tick := time.NewTicker(analyzeEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.stopping:
			return
		case <-tick.C:
		}
		if err := s.analyzeStale(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("store: refreshing planner statistics failed", "err", err)
		}
	}
}

// analyzeStale analyzes the hot tables whose statistics are stale, under an advisory lock that
// instances sharing the schema take in turn (one that finds it taken skips this round: the
// other is refreshing the same statistics). ANALYZE takes a table lock that conflicts only with
// VACUUM, ANALYZE and schema changes: reads and writes go on.
func (s *Store) analyzeStale(ctx context.Context) error {
	conn, err := s.rdb.Connx(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	var stale []string
	if err := conn.SelectContext(ctx, &stale, staleTables, analyzeMinChanges); err != nil {
		return fmt.Errorf("read table statistics: %w", err)
	}
	if len(stale) == 0 {
		return nil
	}
	// The lock is the schema's: stores on other schemas of the database analyze their own tables.
	var locked bool
	if err := conn.GetContext(ctx, &locked, schemaTryLock, analyzeLockKey); err != nil {
		return fmt.Errorf("take the analyze lock: %w", err)
	}
	if !locked {
		return nil
	}
	defer func() {
		// A fresh context: the lock must be released even when ctx ended.
		_, _ = conn.ExecContext(context.Background(), schemaUnlock, analyzeLockKey)
	}()
	for _, table := range stale {
		if err := analyzeSampled(ctx, conn, table); err != nil {
			return fmt.Errorf("analyze %s: %w", table, err)
		}
	}
	return nil
}

// analyzeTarget is the statistics target of the analyzer's rounds: ANALYZE samples 300 rows
// per unit, so 3,000 rows, where the server's default of 100 samples 30,000. What the plans
// need (the share of each dispatch state, the spread of sizes and references) shows in the
// smaller sample, and a round costs a sixth. Measured with pg_stat_statements over
// `bench --messages 30000 --callers 64 --load wrk --database URL` (2 runs each): the ANALYZE
// statements took 350-390 ms a run at the default and 48-63 ms at 10, and the database's CPU
// went from 222-224 to 207-210 µs per message. Autovacuum, where it runs, still analyzes at
// the server's target.
const analyzeTarget = 10

// analyzeSampled analyzes table at analyzeTarget, in a transaction of its own so that the
// setting goes with it.
func analyzeSampled(ctx context.Context, conn *sqlx.Conn, table string) error {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // after Commit, a no-op
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL default_statistics_target = %d", analyzeTarget)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "ANALYZE "+pgx.Identifier{table}.Sanitize()); err != nil {
		return err
	}
	return tx.Commit()
}
