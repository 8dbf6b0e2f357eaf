package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/store/pgtest"
)

// TestPostgresAnalyzerRefreshesStaleStatistics fills a fresh queue past the analyzer's
// threshold: a round analyzes the messages table, whose statistics autovacuum would not gather
// for a minute, and the next, with nothing changed since, leaves it alone.
func TestPostgresAnalyzerRefreshesStaleStatistics(t *testing.T) {
	url := pgtest.Schema(t)
	t.Parallel()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := openPostgres(t, url, enginetest.NewFakeClock(now))
	batch := make([]engine.Acceptance, 0, 1200)
	for i := range cap(batch) {
		batch = append(batch, acceptance(fmt.Sprint("an-", i), now))
	}
	for _, r := range s.Accept(ctx, batch) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	raw, err := sqlx.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	stats := func() (mods int64, analyzed sql.NullTime) {
		t.Helper()
		// The server publishes a backend's counts some seconds after its transactions end.
		if _, err := raw.ExecContext(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
			t.Fatal(err)
		}
		var auto sql.NullTime
		row := raw.QueryRowxContext(ctx, `SELECT n_mod_since_analyze, last_analyze, last_autoanalyze
			FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = 'messages'`)
		if err := row.Scan(&mods, &analyzed, &auto); err != nil {
			t.Fatal(err)
		}
		if auto.Valid {
			// Rare: autovacuum came by first (it visits once a minute), and there is nothing
			// left for the analyzer to show.
			t.Skip("autovacuum analyzed the table before the analyzer could")
		}
		return mods, analyzed
	}
	// Wait (bounded) for the server to publish the inserts: that is the analyzer's input.
	deadline := time.Now().Add(30 * time.Second)
	for mods, _ := stats(); mods < 1200; mods, _ = stats() {
		if time.Now().After(deadline) {
			t.Fatalf("the server reports %d changed rows, want 1200", mods)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The store's own analyzer runs rounds too (every few seconds) and may hold the schema's
	// analyze lock, in which case this round skips: run rounds until the statistics are fresh.
	var mods int64
	var analyzed sql.NullTime
	for {
		if err := s.AnalyzeStale(ctx); err != nil {
			t.Fatalf("AnalyzeStale: %v", err)
		}
		if mods, analyzed = stats(); analyzed.Valid && mods == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the rounds: last_analyze %v, %d changed rows; want set and 0", analyzed, mods)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The round sampled at the analyzer's small target: a histogram of at most 11 bounds for
	// the distinct ids, where the server's default target would have kept 101.
	var bounds int
	if err := raw.GetContext(ctx, &bounds, `SELECT coalesce(array_length(histogram_bounds::text::text[], 1), 0)
		FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'messages' AND attname = 'id'`); err != nil {
		t.Fatal(err)
	}
	if bounds < 2 || bounds > 11 {
		t.Fatalf("the id histogram has %d bounds, want 2 to 11 (statistics target 10)", bounds)
	}
	if err := s.AnalyzeStale(ctx); err != nil {
		t.Fatalf("AnalyzeStale again: %v", err)
	}
	if _, again := stats(); again.Time != analyzed.Time {
		t.Fatalf("a round with nothing stale analyzed again (%v, then %v)", analyzed.Time, again.Time)
	}
}
