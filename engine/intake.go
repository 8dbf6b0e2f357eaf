package engine

import "sync/atomic"

// Intake counts the submissions the Submitter has taken. An Admission policy reads it to tell
// a burst of submissions from a quiet moment. The zero value is ready to use; a nil Intake
// counts nothing.
type Intake struct {
	started atomic.Int64
}

// take counts one submission.
func (in *Intake) take() {
	if in != nil {
		in.started.Add(1)
	}
}

// Started is how many submissions the Submitter has taken since the process began.
func (in *Intake) Started() int64 {
	if in == nil {
		return 0
	}
	return in.started.Load()
}
