package engine

import "testing"

func TestCheckScriptOutcome(t *testing.T) {
	t.Parallel()
	good := []struct{ outcome, code string }{
		{"accepted", ""}, {"transient", ""}, {"maybe-sent", "gw.timeout"}, {"permanent", "gateway.http-400"},
	}
	for _, g := range good {
		if class, err := CheckScriptOutcome(g.outcome, g.code); err != nil || string(class) != g.outcome {
			t.Errorf("%q/%q refused: %v", g.outcome, g.code, err)
		}
	}
	bad := []struct{ outcome, code string }{
		{"sent", ""}, {"", ""}, {"permanent", ""}, {"transient", "has space"}, {"accepted", string(make([]byte, 65))},
	}
	for _, b := range bad {
		if _, err := CheckScriptOutcome(b.outcome, b.code); err == nil {
			t.Errorf("%q/%q accepted", b.outcome, b.code)
		}
	}
}
