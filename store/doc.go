// Package store is Switchboard's durable state: the engine.Store implementation over sqlx,
// with embedded versioned SQL migrations per dialect (migrations/sqlite/*.sql and
// migrations/postgres/*.sql) and a conformance suite (store/storetest) that both dialects pass.
//
// It owns the database schema, the group-commit writer (one goroutine owns the process's only
// write connection and commits whatever requests are waiting in one transaction), claims under
// leases, receipts, idempotency records, daily quota counters and the HMAC-chained audit
// journal. SQLite (mattn/go-sqlite3, WAL) is the embedded default; PostgreSQL (pgx stdlib) lets
// several processes share one queue (see postgres.go). Every statement lives in one *_sql.go
// file per aggregate, written once with ? placeholders; dialect.go says what differs.
//
// Times are stored as integer Unix milliseconds (UTC), so a time read back is the time written
// truncated to the millisecond. Every time the store writes comes from the caller or from
// Config.Clock, never from time.Now.
//
// store imports engine (types only), sqlx, the SQL drivers and the standard library. It must
// never import a provider (providers/...), scripting, goja or libp2p.
package store
