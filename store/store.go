package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" database/sql driver

	"switchboard/engine"
)

// Store is the durable store over SQLite or PostgreSQL. It implements engine.Store; every method
// is safe for concurrent use. Writes go through writer goroutines that group concurrent requests
// into shared transactions (group commit): one on SQLite, Config.Writers on PostgreSQL, each
// with its own connection and audit chain (on PostgreSQL the first takes every request but
// acceptances, the others the acceptances); reads use a separate pool of connections.
// On PostgreSQL any number of Stores (one per process) share one database: claims skip the rows
// another instance locked, and each instance writes its own audit chain.
type Store struct {
	cfg        Config
	log        *slog.Logger
	clock      engine.Clock
	d          *dialect
	q          *queries
	wdb        *sqlx.DB              // the writers' connections, one each
	rdb        *sqlx.DB              // the read pool
	cdb        *sqlx.DB              // the checkpointer's connection (SQLite only)
	owner      *os.File              // the lock file held while this Store owns the SQLite database (Config.Owner)
	migrations []migration           // the embedded migrations: the schema this binary expects
	msgSubs    []engine.Subscription // the subscriptions that take message.status events
	deviceSubs []engine.Subscription // the subscriptions that take device.unregistered events

	writers         []*writer
	sinceCheckpoint int // owned by the only SQLite writer
	startedAt       int64

	batches atomic.Int64 // transactions the writer committed or rolled back
	handled atomic.Int64 // requests those transactions carried
	reruns  atomic.Int64 // batches run again one statement at a time
	merged  atomic.Int64 // pipelined statements run as parts of multi-row ones

	requests       chan *request // everything but acceptances: the first writer's
	accepts        chan *request // acceptances: any writer's
	stopping       chan struct{}
	writerDone     chan struct{}
	checkpointPoke chan struct{}
	upkeepDone     chan struct{} // closed when the checkpointer (SQLite) or analyzer (PostgreSQL) ends
	closeOnce      sync.Once
	closeErr       error
}

// Open opens the database (the SQLite file at cfg.Path, confirming WAL, or the PostgreSQL
// database at cfg.URL), applies the embedded migrations of its dialect when cfg.Migrate is set,
// and starts the group-commit writer. Without cfg.Migrate it refuses a database that does not
// exist or is not at the latest schema version (ErrNotMigrated), so that a command line tool
// never works on a half-built schema. For sqlite in a binary built without cgo it returns
// ErrCgoDisabled. The caller must Close the Store.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	d, fsys, dir := sqliteDialect(), sqliteMigrations, "migrations/sqlite"
	if cfg.Driver == "postgres" {
		d, fsys, dir = postgresDialect(), postgresMigrations, "migrations/postgres"
	}
	list, err := loadMigrations(fsys, dir)
	if err != nil {
		return nil, err
	}
	s := &Store{
		cfg:        cfg,
		log:        cfg.Logger,
		clock:      cfg.Clock,
		d:          d,
		q:          newQueries(d),
		migrations: list,
		msgSubs:    subscriptionsFor(cfg.Subscriptions, func(s engine.Subscription) []string { return s.MessageProfiles }),
		deviceSubs: subscriptionsFor(cfg.Subscriptions, func(s engine.Subscription) []string { return s.DeviceProfiles }),
		startedAt:  ms(cfg.Clock.Now()),
		requests:   make(chan *request, maxBatch),
		accepts:    make(chan *request, maxBatch),
		stopping:   make(chan struct{}),
		writerDone: make(chan struct{}),

		checkpointPoke: make(chan struct{}, 1),
		upkeepDone:     make(chan struct{}),
	}
	open := s.openSQLite
	if cfg.Driver == "postgres" {
		open = s.openPostgres
	}
	if err := open(ctx, list); err != nil {
		s.closeDatabases()
		return nil, err
	}
	var running sync.WaitGroup
	for _, w := range s.writers {
		running.Go(w.run)
	}
	go func() { running.Wait(); close(s.writerDone) }()
	switch {
	case s.cdb != nil:
		go s.runCheckpointer()
	case cfg.Driver == "postgres":
		go s.runAnalyzer()
	default:
		close(s.upkeepDone)
	}
	return s, nil
}

// openSQLite opens the write connection, the read pool and the checkpointer's connection of
// the SQLite file and checks the schema.
func (s *Store) openSQLite(ctx context.Context, list []migration) error {
	if err := s.claimSQLiteFiles(); err != nil {
		return err
	}
	wdb, err := sqlx.Open("sqlite3", s.cfg.writeDSN(s.cfg.Migrate))
	if err != nil {
		return fmt.Errorf("store: open %s: %w", s.cfg.Path, err)
	}
	s.wdb = wdb
	// SQLite has one writer: a second write connection would only wait for the lock.
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	if err := wdb.PingContext(ctx); err != nil {
		if !s.cfg.Migrate {
			return fmt.Errorf("store: open %s (it must exist and be migrated): %w", s.cfg.Path, err)
		}
		return fmt.Errorf("store: open %s: %w", s.cfg.Path, err)
	}
	var mode string
	if err := wdb.GetContext(ctx, &mode, `PRAGMA journal_mode`); err != nil {
		return fmt.Errorf("store: read journal mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("store: %s is in journal mode %q, not WAL (is it on a file system without shared memory?)", s.cfg.Path, mode)
	}
	if s.cfg.Migrate {
		if err := migrate(ctx, wdb, s.q, list, s.clock.Now()); err != nil {
			return err
		}
	}
	if err := checkSchema(ctx, wdb, s.q, s.migrations); err != nil {
		return fmt.Errorf("store: %s: %w", s.cfg.Path, err)
	}
	rdb, err := sqlx.Open("sqlite3", s.cfg.readDSN())
	if err != nil {
		return fmt.Errorf("store: open read pool: %w", err)
	}
	s.rdb = rdb
	rdb.SetMaxOpenConns(s.cfg.ReadConnections)
	rdb.SetMaxIdleConns(s.cfg.ReadConnections)
	if err := rdb.PingContext(ctx); err != nil {
		return fmt.Errorf("store: open read pool: %w", err)
	}
	if err := s.addWriters(ctx, 1); err != nil {
		return err
	}
	return s.openCheckpointer(ctx)
}

// Close stops the writer, answering requests still queued with engine.ErrStoreClosed (a
// batch already running completes), and closes the database. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stopping)
		<-s.writerDone
		<-s.upkeepDone
		s.closeErr = s.closeDatabases()
	})
	return s.closeErr
}

func (s *Store) closeDatabases() error {
	var errs []error
	for _, w := range s.writers {
		errs = append(errs, w.close())
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if s.cdb != nil {
		errs = append(errs, s.cdb.Close())
	}
	if s.wdb != nil {
		errs = append(errs, s.wdb.Close())
	}
	if s.owner != nil { // last: the database is closed before another process may own it
		errs = append(errs, s.owner.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Ready returns nil when the database answers and is at the schema version this binary
// expects; engine.ErrStoreClosed after Close.
func (s *Store) Ready(ctx context.Context) error {
	select {
	case <-s.stopping:
		return engine.ErrStoreClosed
	default:
	}
	return checkSchema(ctx, s.rdb, s.q, s.migrations)
}

// WriterStats counts the group-commit writer's work since Open.
type WriterStats struct {
	Batches  int64 // transactions run
	Requests int64 // requests they carried; Requests/Batches is the mean batch size
	// Reruns counts the batches rolled back and run again one statement at a time: an
	// acceptance that failed in a way that may have written, or a pipelined finish or receipt
	// that did not hold (pipeline.go).
	Reruns int64
	// Merged counts the pipelined finishes and receipts that ran as rows of a multi-row
	// statement rather than one statement each (pipeline_many.go).
	Merged int64
}

// WriterStats reports how much the writer batched so far.
func (s *Store) WriterStats() WriterStats {
	return WriterStats{Batches: s.batches.Load(), Requests: s.handled.Load(), Reruns: s.reruns.Load(), Merged: s.merged.Load()}
}

// WriterID is the audit writer id of this instance's first writer: its chain in the journal.
func (s *Store) WriterID() string { return s.writers[0].id }

var _ engine.Store = (*Store)(nil)
