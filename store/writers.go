package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash"

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
		conn, err := s.wdb.Connx(ctx)
		if err != nil {
			return fmt.Errorf("store: take write connection %d: %w", i+1, err)
		}
		s.writers = append(s.writers, &writer{s: s, id: rand.Text(), conn: conn,
			stmts: make(map[string]*sqlx.Stmt), mac: newMAC(s.cfg.AuditKey)})
	}
	return nil
}

// close closes the writer's statements and gives its connection back.
func (w *writer) close() error {
	var errs []error
	for _, st := range w.stmts {
		errs = append(errs, st.Close())
	}
	errs = append(errs, w.conn.Close())
	return errors.Join(errs...)
}
