package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// benchServeApp is the application_name of the serve instances' connections in a bench run on
// PostgreSQL: the database's CPU is charged to the run for these backends and the server's own
// processes, not for other clients of a shared server (nor the bench's own reads).
const benchServeApp = "switchboard-bench-serve"

// benchDatabase is the PostgreSQL database of a run: a fresh schema, dropped at close, and
// what it takes to charge the server's CPU time to the run.
type benchDatabase struct {
	db         *sql.DB // the bench's own connection (application_name switchboard-bench)
	schema     string
	serveURL   string // what the instances connect with: the schema and benchServeApp
	postmaster int    // the server's main process on this machine, 0 when it is not here
	mu         sync.Mutex
	tally      *cpuTally
}

// openBenchDatabase creates a schema for the run on the database at rawURL.
func openBenchDatabase(ctx context.Context, rawURL string) (*benchDatabase, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, usageError(fmt.Errorf("--database must be a postgres:// URL"))
	}
	own := *u
	q := own.Query()
	q.Set("application_name", "switchboard-bench")
	own.RawQuery = q.Encode()
	db, err := sql.Open("pgx", own.String())
	if err != nil {
		return nil, environment("database.unreachable", "--database", err)
	}
	db.SetMaxOpenConns(2)
	b := &benchDatabase{db: db, schema: "sbbench_" + strings.ToLower(rand.Text()[:12]), tally: newCPUTally()}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA `+b.schema); err != nil {
		db.Close()
		return nil, environment("database.unreachable", "--database", fmt.Errorf("create the run's schema: %w", err))
	}
	q = u.Query()
	q.Set("search_path", b.schema)
	q.Set("application_name", benchServeApp)
	u.RawQuery = q.Encode()
	b.serveURL = u.String()
	// The server runs on this machine when the backend serving this connection is one of its
	// processes: its parent is the server's main process.
	var backend int
	if err := db.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err == nil {
		if st, ok := readProcStat(backend); ok {
			b.postmaster = st.ppid
		}
	}
	return b, nil
}

// local reports whether the server's processes can be measured (it runs on this machine).
func (b *benchDatabase) local() bool { return b.postmaster > 0 }

// observe records the CPU time of the server's processes that work for the run: the main
// process, its background processes (WAL writer, checkpointer, background writer, autovacuum)
// and the backends of the serve instances' connections; other clients' backends are left out.
func (b *benchDatabase) observe(ctx context.Context) error {
	if !b.local() {
		return nil
	}
	children, err := childrenOf(b.postmaster)
	if err != nil {
		return err
	}
	rows, err := b.db.QueryContext(ctx, `SELECT pid FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND application_name IS DISTINCT FROM $1`, benchServeApp)
	if err != nil {
		return fmt.Errorf("read the server's backends: %w", err)
	}
	others := map[int]bool{}
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			rows.Close()
			return err
		}
		others[pid] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	pids := []int{b.postmaster}
	for _, pid := range children {
		if !others[pid] {
			pids = append(pids, pid)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tally.observe(pids)
	return nil
}

// cpu is the server's CPU time charged to the run so far.
func (b *benchDatabase) cpu() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tally.total()
}

// close drops the run's schema.
func (b *benchDatabase) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = b.db.ExecContext(ctx, `DROP SCHEMA `+b.schema+` CASCADE`)
	_ = b.db.Close()
}
