package store

import (
	"context"
	"crypto/rand"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash"
	"time"

	"github.com/jmoiron/sqlx"
)

// writer is one group-commit writer: a goroutine (run) with its own write connection, its
// prepared statements and its own audit chain. After Open only its goroutine touches it.
type writer struct {
	s     *Store
	id    string // the audit writer id: its chain in the journal
	conn  *sqlx.Conn
	stmts map[string]*sqlx.Stmt
	chain chainState
	mac   hash.Hash // the audit key's HMAC, the writer's own (a hash.Hash is not shared safely)
}

// addWriters takes n connections of the write pool, one writer each. Every writer gets a fresh
// random id, so that every process (and every run of a command) writes chains of its own.
func (s *Store) addWriters(ctx context.Context, n int) error {
	for i := range n {
		conn, err := s.takeWriteConn(ctx)
		if err != nil {
			return fmt.Errorf("store: write connection %d: %w", i+1, err)
		}
		s.writers = append(s.writers, &writer{s: s, id: rand.Text(), conn: conn,
			stmts: make(map[string]*sqlx.Stmt), mac: newMAC(s.cfg.AuditKey)})
	}
	return nil
}

// takeWriteConn takes a connection of the write pool for a writer and runs the dialect's
// writer setup on it.
func (s *Store) takeWriteConn(ctx context.Context) (*sqlx.Conn, error) {
	conn, err := s.wdb.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("take it: %w", err)
	}
	if s.d.writerSetup != "" {
		if _, err := conn.ExecContext(ctx, s.d.writerSetup); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("set it up: %w", err)
		}
	}
	return conn, nil
}

// close closes the writer's statements and gives its connection back.
func (w *writer) close() error {
	if w.conn == nil {
		return nil
	}
	var errs []error
	for _, st := range w.stmts {
		errs = append(errs, st.Close())
	}
	errs = append(errs, w.conn.Close())
	return errors.Join(errs...)
}

// Reconnection (PostgreSQL). A writer holds one connection for its life, so when the server
// restarts, or the connection breaks, every batch after would fail on it. After a failed batch
// the writer pings its connection; a broken one is dropped, and the next batch takes a fresh
// one from the pool (failing, as the batch it carries, while the server is gone).

// reconnectTimeout bounds taking a fresh write connection and reading the chain head back.
const reconnectTimeout = 5 * time.Second

// dropIfBroken drops the writer's connection when it no longer answers.
func (w *writer) dropIfBroken() {
	if w.s.d.name != "postgres" || w.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), reconnectTimeout)
	defer cancel()
	if w.conn.PingContext(ctx) == nil {
		return
	}
	w.s.log.Warn("store: the write connection broke; the next batch takes a new one", "writer", w.id)
	// A connection that failed must not go back to the pool.
	_ = w.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = w.conn.Close()
	w.conn, w.stmts = nil, make(map[string]*sqlx.Stmt)
}

// reconnect takes a fresh write connection and reads the writer's chain head back from the
// database: a batch whose commit broke off may have committed all the same, and the chain
// must go on from what the database holds, not from what the writer last knew.
func (w *writer) reconnect() error {
	ctx, cancel := context.WithTimeout(context.Background(), reconnectTimeout)
	defer cancel()
	conn, err := w.s.takeWriteConn(ctx)
	if err != nil {
		return fmt.Errorf("store: new write connection: %w", err)
	}
	var h headRow
	switch err := conn.GetContext(ctx, &h, w.s.q.audit.head, w.id); {
	case err == nil:
		w.chain = chainState{seq: h.LastSeq, mac: h.LastMAC}
	case isNoRows(err):
		w.chain = chainState{} // no batch of this writer journaled anything yet
	default:
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
		return fmt.Errorf("store: read the audit chain head back: %w", err)
	}
	w.conn = conn
	w.s.log.Info("store: write connection restored", "writer", w.id)
	return nil
}
