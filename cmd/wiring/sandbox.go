package wiring

import (
	"time"

	"switchboard/engine/runtime"
	"switchboard/scripting"
)

// SandboxLimits turns the runtime file's sandbox member into the limits every adapter is
// compiled with. A zero member (a Runtime built by hand) keeps the sandbox default; the loader
// has already refused values above the defaults, and Compile lowers the defaults to these.
func SandboxLimits(s runtime.Sandbox) scripting.Limits {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	deadlines := map[string]time.Duration{}
	for entry, n := range map[string]int{"prepare": s.PrepareMilliseconds, "interpret": s.InterpretMilliseconds,
		"receipt": s.ReceiptMilliseconds} {
		if n > 0 {
			deadlines[entry] = ms(n)
		}
	}
	return scripting.Limits{SourceBytes: s.SourceBytes, StringBytes: s.StringBytes,
		CallStackFrames: s.CallStackFrames, Deadlines: deadlines}
}
