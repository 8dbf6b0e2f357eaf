package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
)

// startCPUProfile starts writing a CPU profile to path; the returned function stops it and
// closes the file, and may be called more than once.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start the CPU profile: %w", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		})
	}, nil
}
