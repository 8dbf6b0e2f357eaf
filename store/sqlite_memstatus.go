//go:build cgo

package store

/*
// SQLite counts every allocation for sqlite3_status() under one process-wide mutex, which each
// sqlite3_malloc and sqlite3_free takes. Nothing in Switchboard reads those figures, so the
// counting is switched off before SQLite initializes: at program load, ahead of the first
// connection, as SQLite's own advice for speed has it (SQLITE_DEFAULT_MEMSTATUS=0). 9 is
// SQLITE_CONFIG_MEMSTATUS, which SQLite's interface keeps stable; go-sqlite3 links the library
// into the binary, so the symbols resolve there.
int sqlite3_config(int, ...);
long long sqlite3_memory_used(void);

__attribute__((constructor)) static void switchboard_sqlite_memstatus_off(void) {
	sqlite3_config(9, 0);
}
*/
import "C"

// sqliteMemoryCounted is what SQLite's allocation counter holds: 0 for good while the counting
// is off, the bytes in use when it is on.
func sqliteMemoryCounted() int64 { return int64(C.sqlite3_memory_used()) }
