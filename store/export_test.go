package store

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// OpenRaw opens a second, plain pool on s's database file, for tests that look at or tamper
// with rows behind the store's back.
func OpenRaw(s *Store) (*sqlx.DB, error) { return sqlx.Open("sqlite3", s.cfg.writeDSN(false)) }

// Path is the database file s opened.
func (s *Store) Path() string { return s.cfg.Path }

// AnalyzeStale runs one round of the PostgreSQL analyzer now.
func (s *Store) AnalyzeStale(ctx context.Context) error { return s.analyzeStale(ctx) }
