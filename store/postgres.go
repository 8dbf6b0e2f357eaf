package store

import (
	"context"
	"database/sql/driver"
	"embed"
	"fmt"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/jmoiron/sqlx"
)

// PostgreSQL: the scale-out engine. Every process opens its own Store on the shared database;
// each has its own group-commit writer on one connection, and the database arbitrates between
// them: claims lock the due rows they take and skip rows other instances locked (FOR UPDATE SKIP
// LOCKED), the daily counters are locked by the batch that counts, inbox writers take a
// transaction advisory lock, migrations and retention sweeps take session advisory locks.

//go:embed migrations/postgres/*.sql
var postgresMigrations embed.FS

// migrateLockKey is the migrations' advisory lock key (an arbitrary constant, ASCII
// "sbmigrat"). It is the database's, not the schema's: the schema may not exist yet when it is
// taken, and migrations of two deployments in one database only wait for each other.
const migrateLockKey = 0x73626d6967726174

// Schema-scoped advisory locks (PostgreSQL): the first half of the key names the lock, the
// second is a hash of the schema's name, so that stores in other schemas of one database hold
// locks of their own. The sweep and the analyzer take theirs this way.
const (
	schemaTryLock = `SELECT pg_try_advisory_lock($1, hashtext(current_schema()))`
	schemaUnlock  = `SELECT pg_advisory_unlock($1, hashtext(current_schema()))`
)

// sweepLockKey names the retention sweep's schema-scoped lock (ASCII "sbsw"): one deployment's
// sweep never makes another's, in another schema of the database, skip its turn.
const sweepLockKey int32 = 0x73627377

// openPostgres opens the writer's connection and the read pool, migrates under the migration
// lock when asked, and checks the schema version.
func (s *Store) openPostgres(ctx context.Context, list []migration) error {
	wdb, err := sqlx.Open("pgx", s.cfg.URL)
	if err != nil {
		return fmt.Errorf("store: open postgres: %w", err)
	}
	s.wdb = wdb
	// One connection per writer; Open borrows one for migrations before the writers take them.
	wdb.SetMaxOpenConns(s.cfg.Writers)
	wdb.SetMaxIdleConns(s.cfg.Writers)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	if err := wdb.PingContext(ctx); err != nil {
		return fmt.Errorf("store: connect to postgres: %w", err)
	}
	if s.cfg.Migrate {
		if err := s.migrateLocked(ctx, list); err != nil {
			return err
		}
	}
	if err := checkSchema(ctx, wdb, s.q, s.migrations); err != nil {
		return fmt.Errorf("store: postgres: %w", err)
	}
	rdb, err := sqlx.Open("pgx", s.cfg.URL)
	if err != nil {
		return fmt.Errorf("store: open postgres read pool: %w", err)
	}
	s.rdb = rdb
	rdb.SetMaxOpenConns(s.cfg.ReadConnections)
	rdb.SetMaxIdleConns(s.cfg.ReadConnections)
	rdb.SetConnMaxIdleTime(5 * time.Minute)
	if err := rdb.PingContext(ctx); err != nil {
		return fmt.Errorf("store: open postgres read pool: %w", err)
	}
	return s.addWriters(ctx, s.cfg.Writers)
}

// migrateLocked applies the missing migrations while holding the migration lock, so that
// instances starting together migrate one after the other (CREATE TABLE IF NOT EXISTS alone
// races in PostgreSQL's catalog).
func (s *Store) migrateLocked(ctx context.Context, list []migration) (err error) {
	conn, err := s.wdb.Connx(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate: connect: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLockKey)); err != nil {
		return fmt.Errorf("store: migrate: take the migration lock: %w", err)
	}
	defer func() {
		if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrateLockKey)); uerr != nil && err == nil {
			err = fmt.Errorf("store: migrate: release the migration lock: %w", uerr)
		}
	}()
	return migrate(ctx, conn, s.q, list, s.clock.Now())
}

// LockSweep takes the retention lock of the schema, so that instances sharing it never run
// two sweeps at once. It returns ok false, without waiting, when another instance holds it;
// release frees it. On SQLite, whose one writer already serializes every erasure, it always
// succeeds.
func (s *Store) LockSweep(ctx context.Context) (release func(), ok bool, err error) {
	if s.d.name != "postgres" {
		return func() {}, true, nil
	}
	conn, err := s.rdb.Connx(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("store: retention lock: connect: %w", err)
	}
	if err := conn.GetContext(ctx, &ok, schemaTryLock, sweepLockKey); err != nil {
		conn.Close()
		return nil, false, fmt.Errorf("store: retention lock: %w", err)
	}
	if !ok {
		conn.Close()
		return nil, false, nil
	}
	return func() {
		if _, err := conn.ExecContext(context.Background(), schemaUnlock, sweepLockKey); err != nil {
			s.log.Warn("store: releasing the retention lock; dropping its connection", "err", err)
			// A connection that may still hold the lock must not go back to the pool.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, true, nil
}
