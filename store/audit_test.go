package store_test

import (
	"context"
	"fmt"
	"testing"

	"switchboard/engine/enginetest"
	"switchboard/store"
	"switchboard/store/storetest"
)

// journal opens a store and writes n audited acceptances, one per batch.
func journal(t *testing.T, n int) *store.Store {
	t.Helper()
	s := openTemp(t, enginetest.NewFakeClock(storetest.Epoch()))
	for i := 1; i <= n; i++ {
		mustAccept(t, s, fmt.Sprintf("m-%02d", i), storetest.Epoch())
	}
	return s
}

func verify(t *testing.T, s *store.Store) store.AuditReport {
	t.Helper()
	rep, err := s.VerifyAudit(context.Background())
	if err != nil {
		t.Fatalf("VerifyAudit: %v", err)
	}
	return rep
}

func TestVerifyAuditFindsTampering(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		tamper []string // statements; %s is the writer id
		kind   store.BreakKind
		seq    int64
	}{
		{"changed record", []string{`UPDATE audit SET outcome = 'cancelled' WHERE writer = '%s' AND seq = 4`}, store.BreakChanged, 4},
		{"changed time", []string{`UPDATE audit SET at = at + 1 WHERE writer = '%s' AND seq = 2`}, store.BreakChanged, 2},
		{"deleted record", []string{`DELETE FROM audit WHERE writer = '%s' AND seq = 5`}, store.BreakRemoved, 5},
		{"swapped records", []string{
			`UPDATE audit SET seq = -1 WHERE writer = '%[1]s' AND seq = 3`,
			`UPDATE audit SET seq = 3 WHERE writer = '%[1]s' AND seq = 4`,
			`UPDATE audit SET seq = 4 WHERE writer = '%[1]s' AND seq = -1`,
		}, store.BreakReordered, 3},
		{"records cut from the end", []string{`DELETE FROM audit WHERE writer = '%s' AND seq >= 7`}, store.BreakRemoved, 7},
		{"head rolled back", []string{`UPDATE audit_writers SET last_seq = 6 WHERE writer = '%s'`}, store.BreakChanged, 0},
		{"head deleted", []string{`DELETE FROM audit_writers WHERE writer = '%s'`}, store.BreakRemoved, 0},
		{"whole chain deleted", []string{`DELETE FROM audit WHERE writer = '%s'`}, store.BreakRemoved, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := journal(t, 8)
			if rep := verify(t, s); !rep.OK() || rep.Records != 8 || rep.Writers != 1 {
				t.Fatalf("before tampering: %+v", rep)
			}
			raw := openRaw(t, s)
			for _, stmt := range c.tamper {
				if _, err := raw.Exec(fmt.Sprintf(stmt, s.WriterID())); err != nil {
					t.Fatalf("tamper: %v", err)
				}
			}
			rep := verify(t, s)
			if len(rep.Breaks) != 1 {
				t.Fatalf("breaks = %+v, want one", rep.Breaks)
			}
			if b := rep.Breaks[0]; b.Kind != c.kind || b.Seq != c.seq || b.Writer != s.WriterID() || b.Detail == "" {
				t.Fatalf("break = %+v, want %s at %d", b, c.kind, c.seq)
			}
		})
	}
}

// TestVerifyAuditWalksEveryWriter checks chains of several Store instances, one broken.
func TestVerifyAuditWalksEveryWriter(t *testing.T) {
	t.Parallel()
	first := journal(t, 3)
	second := openAt(t, first.Path(), nil)
	mustAccept(t, second, "m-second", storetest.Epoch())
	if rep := verify(t, second); !rep.OK() || rep.Writers != 2 || rep.Records != 4 {
		t.Fatalf("two intact chains: %+v", rep)
	}
	raw := openRaw(t, first)
	if _, err := raw.Exec(`UPDATE audit SET actor = 'someone else' WHERE writer = ? AND seq = 1`, second.WriterID()); err != nil {
		t.Fatal(err)
	}
	rep := verify(t, first)
	if len(rep.Breaks) != 1 || rep.Breaks[0].Writer != second.WriterID() || rep.Breaks[0].Seq != 1 || rep.Records != 3 {
		t.Fatalf("report = %+v, want the second writer broken at 1", rep)
	}
}

func TestVerifyAuditNeedsTheKey(t *testing.T) {
	t.Parallel()
	s := journal(t, 2)
	other, err := store.Open(context.Background(), store.Config{Path: s.Path(), AuditKey: []byte("another key of 32 bytes........."), Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	rep, err := other.VerifyAudit(context.Background())
	if err != nil || rep.OK() || rep.Breaks[0].Kind != store.BreakChanged || rep.Breaks[0].Seq != 1 {
		t.Fatalf("verified with the wrong key: %+v, %v", rep, err)
	}
}
