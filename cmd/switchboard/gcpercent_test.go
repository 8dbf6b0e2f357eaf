package main

import (
	"runtime/debug"
	"testing"
)

// TestGCPercentDefaultsUnlessGOGCIsSet changes the process's GC target, so it does not run in
// parallel; it restores the target it found.
func TestGCPercentDefaultsUnlessGOGCIsSet(t *testing.T) {
	found := debug.SetGCPercent(100)
	defer debug.SetGCPercent(found)

	setGCPercent(func(string) (string, bool) { return "", false })
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Fatalf("without GOGC the GC target is %d, want %d", got, defaultGCPercent)
	}
	setGCPercent(func(name string) (string, bool) { return "100", name == "GOGC" })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set the GC target is %d, want it left alone (100)", got)
	}
}
