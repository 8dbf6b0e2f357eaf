package engine

import "sync/atomic"

// Intake counts the submissions being accepted right now (from the moment the Submitter takes a
// request until it has an answer). The dispatcher reads it to tell a burst of submissions from a
// quiet moment; see Dispatcher's giving way. The zero value is ready to use.
type Intake struct {
	inFlight atomic.Int64
	started  atomic.Int64
}

// begin marks one submission as started; the function it returns marks it as answered.
func (in *Intake) begin() func() {
	if in == nil {
		return func() {}
	}
	in.inFlight.Add(1)
	in.started.Add(1)
	return func() { in.inFlight.Add(-1) }
}

// InFlight is how many submissions are being accepted now.
func (in *Intake) InFlight() int {
	if in == nil {
		return 0
	}
	return int(in.inFlight.Load())
}

// Started is how many submissions have started since the process began.
func (in *Intake) Started() int64 {
	if in == nil {
		return 0
	}
	return in.started.Load()
}
