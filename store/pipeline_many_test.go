package store

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"switchboard/engine"
)

// TestMultiRowFinishesAndReceipts runs five finishes as one multi-row statement, then one
// call's receipts, two of them for one message: the receipts of distinct messages run as one
// statement, a message's second receipt runs after its first, and a duplicate is stale. Every
// message ends where the statements one by one would leave it, nothing is run again, and the
// audit chain verifies.
func TestMultiRowFinishesAndReceipts(t *testing.T) {
	ids := []string{"blocker", "a", "b", "c", "d", "e"}
	f := newPipelineFixture(t, ids...)
	ctx := context.Background()
	finishes := map[string]engine.Finish{}
	for _, id := range ids {
		finishes[id] = f.finish(id)
	}
	before := f.s.WriterStats()
	for id, err := range f.finishBehindBlocker(finishes) {
		if err != nil {
			t.Fatalf("Finish(%s) = %v", id, err)
		}
	}
	if st := f.s.WriterStats(); st.Merged-before.Merged != 5 || st.Reruns != before.Reruns {
		t.Fatalf("merged %d finishes and ran %d batches again, want 5 and 0", st.Merged-before.Merged, st.Reruns-before.Reruns)
	}
	for _, id := range ids {
		m, err := f.s.Message(ctx, id)
		if err != nil || m.Dispatch != engine.DispatchSubmitted || m.ProviderRef != "ref-"+id || len(m.Attempts) != 1 ||
			m.Attempts[0].Outcome != engine.AttemptAccepted {
			t.Fatalf("Message(%s) = %+v, %v; want submitted with its reference and one accepted attempt", id, m, err)
		}
	}

	receipt := func(id string, r engine.Report) engine.Receipt {
		return engine.Receipt{ProviderReference: "ref-" + id, Report: r}
	}
	receipts := []engine.Receipt{
		receipt("a", engine.ReportDelivered), receipt("b", engine.ReportSent), receipt("b", engine.ReportDelivered),
		receipt("c", engine.ReportDelivered), receipt("d", engine.ReportDelivered), receipt("e", engine.ReportUndelivered),
		receipt("a", engine.ReportDelivered),
	}
	before = f.s.WriterStats()
	tally, err := f.s.RecordReceipts(ctx, "gw", receipts, f.now)
	if err != nil || tally != (engine.ReceiptTally{Applied: 6, Stale: 1}) {
		t.Fatalf("RecordReceipts = %+v, %v; want 6 applied and 1 stale", tally, err)
	}
	// a's and b's first receipts lead to different reports; b's second, c's and d's (all to
	// delivered, distinct messages) are one statement; e's leads to undelivered.
	if st := f.s.WriterStats(); st.Merged-before.Merged != 3 || st.Reruns != before.Reruns {
		t.Fatalf("merged %d receipts and ran %d batches again, want 3 and 0", st.Merged-before.Merged, st.Reruns-before.Reruns)
	}
	want := map[string]engine.Report{"blocker": engine.ReportNone, "a": engine.ReportDelivered, "b": engine.ReportDelivered,
		"c": engine.ReportDelivered, "d": engine.ReportDelivered, "e": engine.ReportUndelivered}
	for id, report := range want {
		if m, err := f.s.Message(ctx, id); err != nil || m.Report != report {
			t.Fatalf("Message(%s).Report = %q, %v; want %q", id, m.Report, err, report)
		}
	}
	f.verifyAudit()
}

// TestMergeRuns checks how queued statements are split into runs: by multi-row form, never
// two for one message, and one by one when a parameter makes no array.
func TestMergeRuns(t *testing.T) {
	row := func(many, key string, args ...any) laterRow {
		return laterRow{query: "single", many: many, key: key, args: args}
	}
	queued := []laterRow{
		row("F", "a", "x", int64(1), sql.NullString{String: "r", Valid: true}),
		row("F", "b", "y", int64(2), sql.NullString{}),
		row("F", "a", "z", int64(3), sql.NullString{}), // a again: a new run
		row("R", "c", int64(4)),
		row("", "d", int64(5)), // no multi-row form
		row("R", "e", int64(6)),
		row("R", "f", struct{}{}), // makes no array: e and f one by one
	}
	runs := mergeRuns(queued)
	var sizes []int
	for _, r := range runs {
		sizes = append(sizes, len(r.rows))
		if (len(r.rows) > 1) != (r.args != nil) {
			t.Fatalf("run of %d rows with arrays %v", len(r.rows), r.args)
		}
	}
	if want := []int{2, 1, 1, 1, 1, 1}; !slices.Equal(sizes, want) {
		t.Fatalf("run sizes %v, want %v", sizes, want)
	}
	first := runs[0].args
	refs, ok := first[2].([]*string)
	if !ok || *refs[0] != "r" || refs[1] != nil || !slices.Equal(first[0].([]string), []string{"x", "y"}) ||
		!slices.Equal(first[1].([]int64), []int64{1, 2}) {
		t.Fatalf("arrays of the first run = %#v", first)
	}
}
