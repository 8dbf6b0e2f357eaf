package store

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jmoiron/sqlx"
)

// dialect is what differs between the two databases the store runs on. Statements are written
// once, for SQLite, with ? placeholders; rebind turns one into the dialect's text, and the few
// statements whose meaning differs take their dialect's part from here.
type dialect struct {
	// name is "sqlite" or "postgres".
	name string
	// bind is sqlx's placeholder style of the driver.
	bind int
	// strip removes the SQLite-only index hints (INDEXED BY) on PostgreSQL, whose planner
	// picks the partial queue indexes by itself once it has statistics.
	strip *regexp.Regexp
	// lockDue ends the due select of a claim. PostgreSQL: FOR UPDATE SKIP LOCKED, so that
	// instances sharing one database claim disjoint pages without waiting on each other.
	lockDue string
	// lockEvents ends the due select of an event claim (PostgreSQL: FOR UPDATE SKIP LOCKED), so
	// that instances sharing one database never claim one event row both.
	lockEvents string
	// lockMatch ends the receipt match (PostgreSQL: FOR UPDATE SKIP LOCKED).
	lockMatch string
	// recipientOfBody is the SQL expression of a payload's recipient (payloads.body is the JSON
	// of engine.Payload).
	recipientOfBody string
	// dailyRead reads an access profile's daily count without locking it.
	dailyRead string
	// dailyLockedRead, when set, reads the count and locks its row until the batch ends
	// (PostgreSQL). A batch uses it only when its optimistic count was overtaken (see
	// batch.flushDaily); SQLite's one writer never needs it.
	dailyLockedRead string
	// serializeInbox, when set, runs before an inbox entry draws its id: it serializes inbox
	// writers across instances so that ids sort in commit order.
	serializeInbox string
	// inboxLastID reads the greatest inbox id (PostgreSQL only, under serializeInbox).
	inboxLastID string
	// dueWalk and dueWalkDone, when set, run around the due select of a claim (PostgreSQL):
	// they make a sort cost more than any index walk, so that the planner walks messages_due
	// in claim order and stops at the page. Measured with auto_explain during a 20,000-message
	// bench run: with statistics that lag a growing queue (the analyzer refreshes them once a
	// fifth of the table has changed), the planner estimated one queued row, scanned the
	// smaller partial index messages_size in full and sorted it: 2,956 rows and 4 to 7 ms for a
	// claim of one message. Set LOCAL, they last only as long as the batch, and the second
	// undoes the first.
	dueWalk, dueWalkDone string
	// foldWrites runs a write and its audit record as one statement (claimSQL.finishFolded,
	// receiptSQL.applyJournaled), and a batch's acceptances as two (accept_folded.go):
	// PostgreSQL, where each statement is a round trip.
	foldWrites bool
	// migrationsTableExists counts schema_migrations tables visible to the connection.
	migrationsTableExists string
	// writerSetup, when set, runs once on each writer's connection as the writer takes it.
	// SQLite: a multi-row statement inside the writer's transaction keeps a statement journal
	// (the pages it changes, as they were); SQLite's default spills it to a temporary file,
	// two writes per page, where in memory it costs one copy (docs/benchmarks-history.md) and leaves
	// no copy of erased rows in a file (docs/operations.md).
	writerSetup string
}

// indexedBy matches an index hint and the space before it.
var indexedBy = regexp.MustCompile(`\s+INDEXED BY \w+`)

// sqliteDialect is the embedded default.
func sqliteDialect() *dialect {
	return &dialect{
		name:                  "sqlite",
		bind:                  sqlx.QUESTION,
		recipientOfBody:       `json_extract(CAST(p.body AS TEXT), '$.recipient')`,
		dailyRead:             `SELECT count FROM profile_daily WHERE access_profile = ? AND day = ?`,
		migrationsTableExists: `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`,
		writerSetup:           `PRAGMA temp_store = MEMORY`,
	}
}

// inboxLockKey is the transaction-level advisory lock key that orders inbox writers on
// PostgreSQL (an arbitrary constant: "sbinbox" in ASCII).
const inboxLockKey = 0x7362696e626f78

// postgresDialect is the scale-out engine.
func postgresDialect() *dialect {
	return &dialect{
		name:            "postgres",
		bind:            sqlx.DOLLAR,
		strip:           indexedBy,
		lockDue:         ` FOR UPDATE OF messages SKIP LOCKED`,
		lockMatch:       ` FOR UPDATE SKIP LOCKED`,
		lockEvents:      ` FOR UPDATE SKIP LOCKED`,
		recipientOfBody: `(convert_from(p.body, 'UTF8')::jsonb ->> 'recipient')`,
		dailyRead:       `SELECT count FROM profile_daily WHERE access_profile = ? AND day = ?`,
		dailyLockedRead: `INSERT INTO profile_daily (access_profile, day, count) VALUES (?, ?, 0)
			ON CONFLICT (access_profile, day) DO UPDATE SET count = profile_daily.count
			RETURNING count`,
		dueWalk:               `SET LOCAL enable_sort = off`,
		dueWalkDone:           `SET LOCAL enable_sort = on`,
		serializeInbox:        fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, inboxLockKey),
		inboxLastID:           `SELECT coalesce(max(id), '') FROM peer_inbox`,
		foldWrites:            true,
		migrationsTableExists: `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_migrations'`,
	}
}

// rebind turns a statement written for SQLite into the dialect's text.
func (d *dialect) rebind(query string) string {
	if d.strip != nil {
		query = d.strip.ReplaceAllString(query, "")
	}
	return sqlx.Rebind(d.bind, query)
}

// retryable reports whether err aborted a whole transaction for a reason that a second run
// may not meet: a deadlock between instances or a serialization failure (PostgreSQL).
func (d *dialect) retryable(err error) bool {
	if err == nil {
		return false // the common case, asked after every unit: no allocation for errors.As
	}
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return false
	}
	switch pg.Code {
	case "40001", "40P01": // serialization_failure, deadlock_detected
		return true
	}
	return false
}
