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
	migrationsList        string
	migrationsRecord      string

	msg       messageSQL
	accept    acceptSQL
	claim     claimSQL
	receipt   receiptSQL
	audit     auditSQL
	inbox     inboxSQL
	operator  operatorSQL
	operation operationSQL
	retention retentionSQL
	events    eventSQL
}

// newQueries returns the statements of dialect d.
func newQueries(d *dialect) *queries {
	begin := `BEGIN`
	if d.name == "sqlite" {
		// The writer takes the write lock at BEGIN, so a batch never fails halfway to upgrade.
		begin = `BEGIN IMMEDIATE`
	}
	return &queries{
		begin:      begin,
		commit:     `COMMIT`,
		rollback:   `ROLLBACK`,
		savepoint:  `SAVEPOINT unit`,
		release:    `RELEASE unit`,
		rollbackTo: `ROLLBACK TO unit`,

		migrationsTableExists: d.migrationsTableExists,
		migrationsCreate: `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER NOT NULL PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at BIGINT  NOT NULL)`,
		migrationsVersion: `SELECT coalesce(max(version), 0) FROM schema_migrations`,
		migrationsList:    `SELECT version FROM schema_migrations`,
		migrationsApplied: d.rebind(`SELECT count(*) FROM schema_migrations WHERE version = ?`),
		migrationsRecord:  d.rebind(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),

		msg:     newMessageSQL(d),
		accept:  newAcceptSQL(d),
		claim:   newClaimSQL(d),
		receipt: newReceiptSQL(d),
		audit:   newAuditSQL(d),

		inbox:     newInboxSQL(d),
		operator:  newOperatorSQL(d),
		operation: newOperationSQL(d),
		retention: newRetentionSQL(d),
		events:    newEventSQL(d),
	}
}
