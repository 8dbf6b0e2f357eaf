package main

import (
	"context"
	"time"

	"switchboard/engine"
	"switchboard/engine/api"
)

// serve verifies the journal on its own, ten minutes after it starts and then every day, so
// that a broken chain shows in the metrics (switchboard_audit_*) and on the console without
// anyone asking. The first check waits so that a process restarted often does not walk the
// whole journal at each start.
const (
	journalFirstCheck    = 10 * time.Minute
	journalCheckInterval = 24 * time.Hour
)

// observedJournalCheck is check with each run recorded in m's audit series.
func observedJournalCheck(check api.JournalCheck, m *metrics, clock engine.Clock) api.JournalCheck {
	return func(ctx context.Context) (engine.JournalReport, error) {
		rep, err := check(ctx)
		m.observeJournal(clock.Now(), brokenChains(rep), err)
		return rep, err
	}
}

// brokenChains counts the writers whose chain has a break.
func brokenChains(rep engine.JournalReport) int {
	writers := map[string]bool{}
	for _, b := range rep.Breaks {
		writers[b.Writer] = true
	}
	return len(writers)
}

// checkJournalOn starts a verification, the one POST /v1/audit/verification starts, at each
// tick until ctx ends.
func (s *stack) checkJournalOn(ctx context.Context, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			s.api.StartJournalVerification()
		}
	}
}

// journalSchedule ticks journalFirstCheck from now, then every journalCheckInterval, until ctx
// ends.
func journalSchedule(ctx context.Context) <-chan time.Time {
	ticks := make(chan time.Time)
	go func() {
		timer := time.NewTimer(journalFirstCheck)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-timer.C:
				select {
				case ticks <- now:
				case <-ctx.Done():
					return
				}
				timer.Reset(journalCheckInterval)
			}
		}
	}()
	return ticks
}
