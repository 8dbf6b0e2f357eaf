package engine

import (
	"errors"
	"fmt"
)

// CheckScriptOutcome validates the outcome and code an adapter's interpret function returned:
// the outcome must be one of the four classes, a permanent outcome needs a code, and a code is
// 1-64 characters of [A-Za-z0-9._:-]. Every provider that runs adapters uses it, so that the
// same script output means the same thing on every transport.
func CheckScriptOutcome(outcome, code string) (OutcomeClass, error) {
	class := OutcomeClass(outcome)
	switch class {
	case OutcomeAccepted, OutcomeTransient, OutcomeMaybeSent, OutcomePermanent:
	default:
		return "", fmt.Errorf("outcome %q is not accepted, transient, permanent or maybe-sent", outcome)
	}
	if class == OutcomePermanent && code == "" {
		return "", errors.New("a permanent outcome needs a code")
	}
	if code != "" && !ValidOutcomeCode(code) {
		return "", errors.New("code must be 1-64 characters of [A-Za-z0-9._:-]")
	}
	return class, nil
}

// ValidOutcomeCode reports whether code is 1-64 characters of [A-Za-z0-9._:-].
func ValidOutcomeCode(code string) bool {
	if code == "" || len(code) > 64 {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}
