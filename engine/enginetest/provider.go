package enginetest

import (
	"context"
	"sync"

	"switchboard/engine"
)

// ScriptedProvider is an engine.Provider whose outcomes a test decides. It records every
// Outbound it was given. It stands in for a transport only in tests of the engine's own logic
// (the dispatcher's decisions); real providers have their own tests against real servers.
type ScriptedProvider struct {
	mu       sync.Mutex
	kind     string
	outcomes []engine.Outcome
	fallback engine.Outcome
	calls    []engine.Outbound
}

// NewScriptedProvider returns a provider that answers outcomes in order, then fallback forever.
func NewScriptedProvider(kind string, fallback engine.Outcome, outcomes ...engine.Outcome) *ScriptedProvider {
	return &ScriptedProvider{kind: kind, fallback: fallback, outcomes: outcomes}
}

// Kind returns the kind given at construction.
func (p *ScriptedProvider) Kind() string { return p.kind }

// Send records the outbound and returns the next scripted outcome.
func (p *ScriptedProvider) Send(_ context.Context, out *engine.Outbound) engine.Outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, *out)
	if len(p.outcomes) > 0 {
		o := p.outcomes[0]
		p.outcomes = p.outcomes[1:]
		return o
	}
	return p.fallback
}

// Close does nothing.
func (p *ScriptedProvider) Close() error { return nil }

// Calls returns a copy of every Outbound sent so far.
func (p *ScriptedProvider) Calls() []engine.Outbound {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]engine.Outbound(nil), p.calls...)
}

var _ engine.Provider = (*ScriptedProvider)(nil)
