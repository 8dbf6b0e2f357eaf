package engine

import "time"

// Clock tells the engine what time it is. Every timestamp the engine or a store writes comes
// from the Clock, so tests can move time exactly (see enginetest.FakeClock) instead of sleeping.
type Clock interface {
	// Now returns the current time. Implementations return UTC.
	Now() time.Time
}

// SystemClock is the Clock of a running process: the wall clock in UTC.
type SystemClock struct{}

// Now returns time.Now in UTC.
func (SystemClock) Now() time.Time { return time.Now().UTC() }
