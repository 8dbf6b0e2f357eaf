package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// benchServeApp is the application_name of the serve instances' connections in a bench run on
// PostgreSQL: the database's CPU is charged to the run for these backends and the server's own
// processes, not for other clients of a shared server (nor the bench's own reads).
const benchServeApp = "switchboard-bench-serve"

// benchDatabase is the PostgreSQL database of a run: a fresh schema, dropped at close, and
// what the bench needs to charge the server's CPU time to the run.
type benchDatabase struct {
	db        *sql.DB // the command's own connection (application_name switchboard-bench)
	schema    string
	serveURL  string // what the instances connect with: the schema and benchServeApp
	readerURL string // what the bench's reader connects with: the schema, switchboard-bench
	backend   int    // the server process serving db, 0 when unknown
}

// openBenchDatabase creates a schema for the run on the database at rawURL.
func openBenchDatabase(ctx context.Context, rawURL string) (*benchDatabase, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, usageError(fmt.Errorf("--database must be a postgres:// URL"))
	}
	withParams := func(params map[string]string) string {
		v := *u
		q := v.Query()
		for k, p := range params {
			q.Set(k, p)
		}
		v.RawQuery = q.Encode()
		return v.String()
	}
	db, err := sql.Open("pgx", withParams(map[string]string{"application_name": "switchboard-bench"}))
	if err != nil {
		return nil, environment("database.unreachable", "--database", err)
	}
	db.SetMaxOpenConns(1) // one backend: the one AnyBackend names
	db.SetConnMaxIdleTime(0)
	b := &benchDatabase{db: db, schema: "sbbench_" + strings.ToLower(rand.Text()[:12])}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA `+b.schema); err != nil {
		db.Close()
		return nil, environment("database.unreachable", "--database", fmt.Errorf("create the run's schema: %w", err))
	}
	b.serveURL = withParams(map[string]string{"search_path": b.schema, "application_name": benchServeApp})
	b.readerURL = withParams(map[string]string{"search_path": b.schema, "application_name": "switchboard-bench"})
	_ = db.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&b.backend)
	return b, nil
}

// foreign lists the server's client backends that do not serve the run's instances.
func (b *benchDatabase) foreign(ctx context.Context) (map[int]bool, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT pid FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND application_name IS DISTINCT FROM $1`, benchServeApp)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]bool{}
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return nil, err
		}
		out[pid] = true
	}
	return out, rows.Err()
}

// close drops the run's schema.
func (b *benchDatabase) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = b.db.ExecContext(ctx, `DROP SCHEMA `+b.schema+` CASCADE`)
	_ = b.db.Close()
}
