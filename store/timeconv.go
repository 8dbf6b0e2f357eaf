package store

import (
	"database/sql"
	"time"
)

// Times are stored as integer Unix milliseconds. These helpers are the only place that converts.

// ms converts t to Unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMs converts Unix milliseconds to a UTC time.
func fromMs(v int64) time.Time { return time.UnixMilli(v).UTC() }

// msPtr converts an optional time to a nullable column value.
func msPtr(t *time.Time) sql.NullInt64 {
	if t == nil || t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// msOpt converts a time that is unset when zero to a nullable column value.
func msOpt(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// timePtr converts a nullable column value to an optional time.
func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMs(v.Int64)
	return &t
}

// nullString maps "" to NULL.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// utcDay names the UTC day of t, the unit of the daily quota.
func utcDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }
