// Package pgtest gives tests a PostgreSQL schema of their own on the server named by the
// environment variable SWITCHBOARD_TEST_POSTGRES_URL (.ci/run sets it), and skips them when it
// is not set.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// EnvURL names the environment variable that holds the test server's URL.
const EnvURL = "SWITCHBOARD_TEST_POSTGRES_URL"

// Schema creates a fresh schema on the test server, drops it (with everything in it) when the
// test ends, and returns a connection URL whose search_path selects it. Without EnvURL the test
// is skipped.
func Schema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		t.Skipf("needs PostgreSQL: set %s to a postgres:// URL of a server where it may create schemas (.ci/run starts one)", EnvURL)
	}
	return SchemaOn(t, base)
}

// SchemaOn is Schema on the server at base, a postgres:// URL.
func SchemaOn(t testing.TB, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("pgtest: %q is not a postgres:// URL", base)
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	name := "sbtest_" + strings.ToLower(rand.Text()[:12])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA `+name); err != nil {
		db.Close()
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, `DROP SCHEMA `+name+` CASCADE`); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", name, err)
		}
		db.Close()
	})
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
