package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

//go:embed migrations/sqlite/*.sql
var sqliteMigrations embed.FS

// ErrNotMigrated is returned (wrapped) by Open without Config.Migrate, and by Ready, when the
// database is not at the schema version this binary expects.
var ErrNotMigrated = errors.New("store: database schema is not at the expected version")

// migration is one embedded, versioned SQL file.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads dir of fsys: files named NNNN_name.sql with distinct positive numbers,
// in increasing order. Numbers may leave gaps (work on separate branches takes numbers ahead of
// time); every embedded migration is applied, and a database is at the expected schema when it
// has applied exactly the embedded ones (see appliedVersions).
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("store: read migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("store: migration file %q is not named NNNN_name.sql", e.Name())
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("store: read migration %s: %w", e.Name(), err)
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("store: migrations %s and %s have one number", out[i-1].name, out[i].name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("store: no migrations embedded")
	}
	return out, nil
}

// schemaVersion returns the highest applied migration version, 0 for a database that was
// never migrated.
func schemaVersion(ctx context.Context, db sqlx.QueryerContext, q *queries) (int, error) {
	var tables int
	if err := sqlx.GetContext(ctx, db, &tables, q.migrationsTableExists); err != nil {
		return 0, fmt.Errorf("store: look for schema_migrations: %w", err)
	}
	if tables == 0 {
		return 0, nil
	}
	var v int
	if err := sqlx.GetContext(ctx, db, &v, q.migrationsVersion); err != nil {
		return 0, fmt.Errorf("store: read schema version: %w", err)
	}
	return v, nil
}

// checkSchema returns nil when the database has applied exactly the embedded migrations list:
// its highest version is the list's last (checkVersion), and none of the list is missing (a
// database migrated by a binary whose list had a gap that a later one fills).
func checkSchema(ctx context.Context, db sqlx.QueryerContext, q *queries, list []migration) error {
	have, err := schemaVersion(ctx, db, q)
	if err != nil {
		return err
	}
	if err := checkVersion(have, list[len(list)-1].version); err != nil {
		return err
	}
	var applied []int
	if err := sqlx.SelectContext(ctx, db, &applied, q.migrationsList); err != nil {
		return fmt.Errorf("store: read applied migrations: %w", err)
	}
	done := make(map[int]bool, len(applied))
	for _, v := range applied {
		done[v] = true
	}
	for _, m := range list {
		if !done[m.version] {
			return fmt.Errorf("%w: migration %s is not applied; run switchboard serve, which migrates on start", ErrNotMigrated, m.name)
		}
	}
	return nil
}

// checkVersion returns nil when the database is exactly at want.
func checkVersion(have, want int) error {
	switch {
	case have == want:
		return nil
	case have > want:
		return fmt.Errorf("%w: database is at version %d, newer than this binary (%d); upgrade switchboard", ErrNotMigrated, have, want)
	case have == 0:
		return fmt.Errorf("%w: database was never migrated (need version %d); run switchboard serve, which migrates on start", ErrNotMigrated, want)
	default:
		return fmt.Errorf("%w: database is at version %d, need %d; run switchboard serve, which migrates on start", ErrNotMigrated, have, want)
	}
}

// migrator is where migrations run: the SQLite write pool, or the one PostgreSQL connection
// that holds the migration lock.
type migrator interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	BeginTxx(ctx context.Context, opts *sql.TxOptions) (*sqlx.Tx, error)
}

// migrate applies every migration the database lacks, each in its own write transaction that
// also records it in schema_migrations. Re-running it is a no-op, and two processes migrating
// at once serialize on the write lock and apply each version once.
func migrate(ctx context.Context, db migrator, q *queries, list []migration, now time.Time) error {
	if _, err := db.ExecContext(ctx, q.migrationsCreate); err != nil {
		return fmt.Errorf("store: create schema_migrations: %w", err)
	}
	for _, m := range list {
		if err := applyMigration(ctx, db, q, m, now); err != nil {
			return err
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db migrator, q *queries, m migration, now time.Time) (err error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migration %s: begin: %w", m.name, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var applied int
	if err := tx.GetContext(ctx, &applied, q.migrationsApplied, m.version); err != nil {
		return fmt.Errorf("store: migration %s: check: %w", m.name, err)
	}
	if applied > 0 {
		return tx.Rollback()
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, q.migrationsRecord, m.version, m.name, ms(now)); err != nil {
		return fmt.Errorf("store: migration %s: record: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migration %s: commit: %w", m.name, err)
	}
	return nil
}
