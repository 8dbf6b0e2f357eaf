package store

import (
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"

	"switchboard/engine"
	"switchboard/store/pgtest"
)

// TestStatusFiltersFollowEngineStatus walks every (dispatch, report) pair through both
// derivations of a status: engine.Status, and the listing's SQL filter as listStatement builds
// it, on SQLite and on PostgreSQL. With one message of that pair in the table, the count of each
// status filter must be 1 exactly for the status engine.Status gives, and 0 for every other.
func TestStatusFiltersFollowEngineStatus(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		db, err := sqlx.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "status.db")+"?mode=rwc")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		walkStatuses(t, db, sqliteDialect())
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.Schema(t) // skips without a server
		t.Parallel()
		db, err := sqlx.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		walkStatuses(t, db, postgresDialect())
	})
}

func walkStatuses(t *testing.T, db *sqlx.DB, d *dialect) {
	t.Helper()
	if _, err := db.Exec(`CREATE TABLE messages (dispatch TEXT NOT NULL, report TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, dispatch := range engine.DispatchStates() {
		for _, report := range engine.ReportStates() {
			if _, err := db.Exec(`DELETE FROM messages`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(d.rebind(`INSERT INTO messages (dispatch, report) VALUES (?, ?)`), string(dispatch), string(report)); err != nil {
				t.Fatal(err)
			}
			want := engine.Status(dispatch, report)
			for _, status := range engine.Statuses() {
				query, args, err := listStatement(d.rebind, engine.MessageQuery{Status: status}, listCursor{}, true)
				if err != nil {
					t.Fatalf("status %s: %v", status, err)
				}
				var n int
				if err := db.Get(&n, query, args...); err != nil {
					t.Fatalf("status %s: %s: %v", status, query, err)
				}
				if (n == 1) != (status == want) {
					t.Fatalf("%s+%s reads %s, but the %s filter (%s) counts it %d times", dispatch, report, want, status, query, n)
				}
			}
		}
	}
	if _, _, err := listStatement(d.rebind, engine.MessageQuery{Status: "lost"}, listCursor{}, true); err == nil {
		t.Fatal("a status that no pair reads has a filter")
	}
}
