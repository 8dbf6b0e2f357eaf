package store

// queries holds every statement of the store, rebound for the dialect once at Open. Each
// aggregate keeps its SQL in its own *_sql.go file; this file holds the transaction control and
// migration bookkeeping statements, the parts that differ most between dialects.
type queries struct {
	begin      string
	commit     string
	rollback   string
	savepoint  string
	release    string
	rollbackTo string

	migrationsTableExists string
	migrationsCreate      string
	migrationsVersion     string
	migrationsApplied     string
	migrationsRecord      string

	msg     messageSQL
	accept  acceptSQL
	claim   claimSQL
	receipt receiptSQL
	audit   auditSQL
}

// newSQLiteQueries returns the statements for SQLite. rebind maps ? placeholders to the
// dialect's (a no-op for SQLite; kept so that a second dialect reuses the aggregate files).
func newSQLiteQueries(rebind func(string) string) *queries {
	return &queries{
		// The writer takes the write lock at BEGIN, so a batch never fails halfway to upgrade.
		begin:      `BEGIN IMMEDIATE`,
		commit:     `COMMIT`,
		rollback:   `ROLLBACK`,
		savepoint:  `SAVEPOINT unit`,
		release:    `RELEASE unit`,
		rollbackTo: `ROLLBACK TO unit`,

		migrationsTableExists: `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`,
		migrationsCreate: `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER NOT NULL PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at INTEGER NOT NULL)`,
		migrationsVersion: `SELECT coalesce(max(version), 0) FROM schema_migrations`,
		migrationsApplied: rebind(`SELECT count(*) FROM schema_migrations WHERE version = ?`),
		migrationsRecord:  rebind(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),

		msg:     newMessageSQL(rebind),
		accept:  newAcceptSQL(rebind),
		claim:   newClaimSQL(rebind),
		receipt: newReceiptSQL(rebind),
		audit:   newAuditSQL(rebind),
	}
}
