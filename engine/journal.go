package engine

import (
	"context"
	"time"
)

// JournalRecord is one record of the audit journal as an operator reads it: its place in its
// writer's chain and what it says. Like every record it holds no recipient, content or
// template data; callers appear as pseudonyms.
type JournalRecord struct {
	Writer    string
	Seq       int64
	At        time.Time
	Event     string
	Actor     string
	MessageID string
	Outcome   string
}

// MaxJournalRecords bounds the records of one message's journal that one read returns.
const MaxJournalRecords = 1000

// Journal reads the audit journal by message.
type Journal interface {
	// MessageJournal returns at most limit (1 to MaxJournalRecords) records naming message
	// id, oldest first (by time, then writer and place in its chain); none for an unknown id.
	MessageJournal(ctx context.Context, id string, limit int) ([]JournalRecord, error)
}

// JournalBreak is the first record of one writer's chain that does not verify.
type JournalBreak struct {
	Writer string
	Seq    int64  // the failing or first missing record; 0 for the chain head
	Kind   string // changed, removed or reordered
	Detail string // which records, never their content
}

// JournalReport is what a verification of the whole journal found.
type JournalReport struct {
	Writers int
	Records int64
	Breaks  []JournalBreak
}
