//go:build cgo

package store

import (
	"context"
	"testing"
	"time"

	"switchboard/engine"
)

// TestSQLiteCountsNoAllocations: SQLite's allocation statistics are off in this binary, so no
// allocation takes their process-wide mutex. With the statistics on, an open store with a
// written message holds counted bytes (its page caches, its prepared statements).
func TestSQLiteCountsNoAllocations(t *testing.T) {
	t.Parallel()
	s := openInternal(t)
	now := time.Now()
	a := engine.Acceptance{Message: engine.Message{ID: "counted", AcceptedAt: now, ExpiresAt: now.Add(time.Hour)}}
	if r := s.Accept(context.Background(), []engine.Acceptance{a})[0]; r.Err != nil {
		t.Fatal(r.Err)
	}
	if n := sqliteMemoryCounted(); n != 0 {
		t.Fatalf("SQLite counted %d bytes in use; its allocation statistics should be off", n)
	}
}
