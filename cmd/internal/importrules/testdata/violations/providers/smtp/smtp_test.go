package smtp_test

import (
	"testing"

	_ "switchboard/store" // allowed: an external test package is a client
)

func TestNothing(t *testing.T) {}
