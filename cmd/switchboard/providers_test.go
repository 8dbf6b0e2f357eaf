package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"switchboard/engine"
)

// TestProviderLogsNameTheProviderOnce builds the providers as serve does, with a JSON logger,
// and starts the peer host: its start line carries the attribute provider exactly once.
func TestProviderLogsNameTheProviderOnce(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	var buf syncBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	providers, err := buildProviders(e.stack.rt, e.stack.pkg, e.clock, log, newMetrics(), peerHooks{inbox: e.stack.store})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, p := range providers {
			_ = p.Close()
		}
	}()
	if err := providers["peers"].(engine.Starter).Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var started string
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, `"msg":"peer host started"`) {
			started = line
		}
		if n := bytes.Count([]byte(line), []byte(`"provider":`)); n > 1 {
			t.Errorf("a log line names the provider %d times: %s", n, line)
		}
	}
	if !strings.Contains(started, `"provider":"peers"`) {
		t.Fatalf("no start line naming the provider in:\n%s", buf.String())
	}
}
