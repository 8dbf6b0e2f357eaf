package store_test

import (
	"context"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
)

// TestUnexpectedFailureFallsBackToSavepoints drives the writer's slow path: in one Accept call,
// the second acceptance collides with the first on the message id (a failure the fast path cannot
// undo), so the batch is rolled back and run again with a savepoint per acceptance. Only the
// colliding acceptance fails; its idempotency key stays unspent.
func TestUnexpectedFailureFallsBackToSavepoints(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s := openTemp(t, clock)
	now := clock.Now()
	first, clash, third := acceptance("m-1", now), acceptance("m-1", now), acceptance("m-3", now)
	clash.Idempotency.Key = "clash-key"
	third.Idempotency.Key = "third-key"
	res := s.Accept(context.Background(), []engine.Acceptance{first, clash, third})
	if res[0].Err != nil || res[2].Err != nil {
		t.Fatalf("the good acceptances failed: %v, %v", res[0].Err, res[2].Err)
	}
	if res[1].Err == nil {
		t.Fatal("a duplicate message id was accepted")
	}
	for _, id := range []string{"m-1", "m-3"} {
		if _, err := s.Message(context.Background(), id); err != nil {
			t.Fatalf("message %s lost: %v", id, err)
		}
	}
	retry := acceptance("m-2", now)
	retry.Idempotency.Key = "clash-key"
	if r := s.Accept(context.Background(), []engine.Acceptance{retry}); r[0].Err != nil || r[0].Replayed {
		t.Fatalf("the failed acceptance's key was spent: %+v", r[0])
	}
	rep, err := s.VerifyAudit(context.Background())
	if err != nil || !rep.OK() || rep.Records != 3 {
		t.Fatalf("audit chain after the slow path: %+v, %v", rep, err)
	}
}
