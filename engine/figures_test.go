package engine_test

import (
	"slices"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
)

// TestFiguresBuckets counts into 10-second buckets under a fake clock: counts land in the
// bucket of their time, old buckets roll off, and a long pause empties everything.
func TestFiguresBuckets(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	f := engine.NewFigures(clock, 10*time.Second, 3)
	f.Accepted()
	f.Accepted()
	f.Attempt("sms", engine.OutcomeAccepted, 0)
	clock.Advance(10 * time.Second)
	f.Accepted()
	f.Attempt("sms", engine.OutcomeMaybeSent, 0)
	s := f.Snapshot()
	if !slices.Equal(s.Accepted, []int64{0, 2, 1}) {
		t.Fatalf("accepted %v", s.Accepted)
	}
	if got := s.Attempts["sms"][engine.OutcomeAccepted]; !slices.Equal(got, []int64{0, 1, 0}) {
		t.Fatalf("sms accepted %v", got)
	}
	if got := s.Attempts["sms"][engine.OutcomeMaybeSent]; !slices.Equal(got, []int64{0, 0, 1}) {
		t.Fatalf("sms maybe-sent %v", got)
	}
	if !s.End.Equal(clock.Now().Add(10*time.Second)) || s.End.Sub(s.Start) != 30*time.Second {
		t.Fatalf("window %s – %s", s.Start, s.End)
	}
	clock.Advance(20 * time.Second)
	if got := f.Snapshot().Accepted; !slices.Equal(got, []int64{1, 0, 0}) {
		t.Fatalf("after 20 s: %v", got)
	}
	clock.Advance(time.Hour)
	s = f.Snapshot()
	if !slices.Equal(s.Accepted, []int64{0, 0, 0}) || !slices.Equal(s.Attempts["sms"][engine.OutcomeAccepted], []int64{0, 0, 0}) {
		t.Fatalf("after an hour: %+v", s)
	}
}
