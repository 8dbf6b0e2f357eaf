package store

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"switchboard/engine"
)

// Config configures Open. Build it once from the runtime file and pass it down.
type Config struct {
	// Driver names the database engine: "sqlite" (the default when empty) or "postgres".
	Driver string
	// Path is the SQLite database file. Open creates it, and its folder, only when Migrate is
	// true (the file 0600, the folder 0700).
	Path string
	// URL is the PostgreSQL connection string (driver postgres), in any form pgx accepts; a
	// search_path parameter selects the schema. It is never written to an error or a log.
	URL string
	// Synchronous is SQLite's synchronous setting: "NORMAL" (the default; with WAL a commit
	// survives a crash of the process, and only a power loss may drop the last commits) or
	// "FULL" (every commit is flushed to disk).
	Synchronous string
	// AuditKey is the HMAC-SHA256 key of the audit chain (the caller derives it from
	// audit.keyRef). Required: at least 16 bytes.
	AuditKey []byte
	// Clock supplies the times the store writes on its own account (migrations, defaults).
	// nil means engine.SystemClock.
	Clock engine.Clock
	// Migrate applies the embedded migrations that are missing. Without it, Open refuses a
	// database that is not exactly at the latest version this binary knows.
	Migrate bool
	// Owner makes this Store the one owner of an SQLite database: Open takes an exclusive lock
	// on the lock file beside it (Path + ".lock") and holds it until Close, and refuses with
	// ErrInUse while another process owns the database. Stores that only read or make a few
	// changes beside the owner (the command-line tools) leave it unset. PostgreSQL ignores it:
	// any number of processes share that database.
	Owner bool
	// Logger receives the store's diagnostics. nil discards them.
	Logger *slog.Logger
	// MaxPayloadBytes is the dispatcher's page byte budget, which Stats uses to count oversized
	// due messages. 0 means 10 MiB (the runtime file's default).
	MaxPayloadBytes int64
	// BusyTimeout is how long a statement waits for a lock held by another process.
	// 0 means 5 seconds.
	BusyTimeout time.Duration
	// ReadConnections bounds the read pool (Message, Stats, LapsedLeases, VerifyAudit). 0 means 4.
	ReadConnections int
	// Subscriptions are the endpoints the store writes outbox rows for, with every change they
	// take (docs/webhooks.md). Empty: no events are written.
	Subscriptions []engine.Subscription
	// EventsWritten, when set, is called after each commit that wrote outbox rows (to wake the
	// delivery worker). It must not block.
	EventsWritten func()
	// Writers is how many group-commit writers (each one connection, one transaction at a time
	// and its own audit chain) a PostgreSQL store runs. 0 means 2. SQLite has exactly one.
	Writers int
	// GatherWait is how long a busy writer holds a small batch open for more requests
	// (writer.go, "Gathering"). 0 means DefaultGatherWait; a negative value turns the wait off.
	GatherWait time.Duration
}

// DefaultGatherWait is a writer's GatherWait when Config.GatherWait is 0.
const DefaultGatherWait = time.Millisecond

// DefaultMaxPayloadBytes is the page byte budget Stats assumes when Config.MaxPayloadBytes is 0.
const DefaultMaxPayloadBytes int64 = 10 << 20

// DefaultPostgresWriters is how many writers a PostgreSQL store runs when Config.Writers is 0.
const DefaultPostgresWriters = 2

// minAuditKeyBytes is the shortest audit key Open accepts.
const minAuditKeyBytes = 16

// ErrCgoDisabled is returned by Open for the sqlite driver in a binary built without cgo:
// mattn/go-sqlite3 is a cgo package and its stub fails every connection.
var ErrCgoDisabled = errors.New("store: the sqlite driver needs cgo, but this binary was built with CGO_ENABLED=0; rebuild with CGO_ENABLED=1 and a C compiler")

// withDefaults returns cfg with defaults filled in, or an error naming the invalid member.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Driver == "" {
		cfg.Driver = "sqlite"
	}
	switch cfg.Driver {
	case "sqlite":
		if err := cfg.checkSQLite(); err != nil {
			return cfg, err
		}
		switch strings.ToUpper(cfg.Synchronous) {
		case "":
			cfg.Synchronous = "NORMAL"
		case "NORMAL", "FULL":
			cfg.Synchronous = strings.ToUpper(cfg.Synchronous)
		default:
			return cfg, fmt.Errorf("store: synchronous %q is not NORMAL or FULL", cfg.Synchronous)
		}
	case "postgres":
		if cfg.Writers <= 0 {
			cfg.Writers = DefaultPostgresWriters
		}
		if strings.TrimSpace(cfg.URL) == "" {
			return cfg, errors.New("store: the postgres driver needs a connection URL")
		}
		if cfg.Synchronous != "" {
			return cfg, errors.New("store: synchronous applies to the sqlite driver only")
		}
	default:
		return cfg, fmt.Errorf("store: database driver %q is not supported (sqlite or postgres)", cfg.Driver)
	}
	if cfg.GatherWait == 0 {
		cfg.GatherWait = DefaultGatherWait
	}
	if len(cfg.AuditKey) < minAuditKeyBytes {
		return cfg, fmt.Errorf("store: audit key has %d bytes, need at least %d", len(cfg.AuditKey), minAuditKeyBytes)
	}
	cfg.AuditKey = append([]byte(nil), cfg.AuditKey...)
	if cfg.Clock == nil {
		cfg.Clock = engine.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.MaxPayloadBytes <= 0 {
		cfg.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if cfg.BusyTimeout <= 0 {
		cfg.BusyTimeout = 5 * time.Second
	}
	if cfg.ReadConnections <= 0 {
		cfg.ReadConnections = 4
	}
	return cfg, nil
}

// checkSQLite checks the members the sqlite driver needs.
func (cfg Config) checkSQLite() error {
	if !cgoEnabled {
		return ErrCgoDisabled
	}
	if strings.TrimSpace(cfg.Path) == "" {
		return errors.New("store: database path is empty")
	}
	if strings.Contains(cfg.Path, ":memory:") || strings.HasPrefix(cfg.Path, "file:") {
		return fmt.Errorf("store: database path %q must name a file (WAL needs one)", cfg.Path)
	}
	return nil
}

// writeDSN is the data source of the single write connection: WAL, foreign keys, the chosen
// synchronous level, and BEGIN IMMEDIATE so that a transaction takes the write lock at once
// instead of failing to upgrade later. create allows SQLite to create the file.
func (cfg Config) writeDSN(create bool) string {
	p := cfg.commonParams()
	p.Set("_journal_mode", "WAL")
	p.Set("_synchronous", cfg.Synchronous)
	p.Set("_txlock", "immediate")
	// Deleted content is overwritten with zeros, on B-tree pages and freelist pages alike, so
	// that erased payloads do not linger in free space (docs/operations.md, "Retention and
	// erasure"). The writer is the only connection that deletes.
	p.Set("_secure_delete", "on")
	// The writer's pages (the right edges of every B-tree) stay hot; 16 MiB keeps them, and
	// more would only make the page cache's hash scans dearer.
	p.Set("_cache_size", "-16384")
	if create {
		p.Set("mode", "rwc")
	} else {
		p.Set("mode", "rw")
	}
	return fileURI(cfg.Path) + "?" + p.Encode()
}

// readDSN is the data source of the read pool: query-only connections whose transactions
// take a snapshot without locking out the writer (WAL).
func (cfg Config) readDSN() string {
	p := cfg.commonParams()
	p.Set("_query_only", "1")
	p.Set("_txlock", "deferred")
	// Each read connection keeps its last readStatements statements prepared: the reads are a
	// few fixed texts (a message, its attempts, the events' subjects, the figures), and
	// preparing one cost as much as running it (BenchmarkReadMessage).
	p.Set("_stmt_cache_size", strconv.Itoa(readStatements))
	p.Set("mode", "rw")
	return fileURI(cfg.Path) + "?" + p.Encode()
}

// readStatements is how many prepared statements each read connection keeps.
const readStatements = 64

// checkpointDSN is the data source of the checkpointer's connection: writable (a checkpoint
// writes the database file) but never used for a transaction.
func (cfg Config) checkpointDSN() string {
	p := cfg.commonParams()
	p.Set("mode", "rw")
	return fileURI(cfg.Path) + "?" + p.Encode()
}

func (cfg Config) commonParams() url.Values {
	p := url.Values{}
	p.Set("_busy_timeout", strconv.FormatInt(cfg.BusyTimeout.Milliseconds(), 10))
	p.Set("_foreign_keys", "1")
	// No per-connection mutex (SQLITE_OPEN_NOMUTEX): database/sql hands a connection to one
	// goroutine at a time and serializes every driver call on it, so the lock SQLite would
	// otherwise take and release around each bind, step, column read and reset guards nothing.
	// The one call made from elsewhere, sqlite3_interrupt on a cancelled context, is safe from
	// any thread by SQLite's contract.
	p.Set("_mutex", "no")
	return p
}

// fileURI turns a path into an SQLite file: URI, escaping the characters a URI gives meaning to.
func fileURI(path string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return "file:" + r.Replace(path)
}
