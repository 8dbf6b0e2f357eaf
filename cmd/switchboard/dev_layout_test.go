package main

import (
	"strings"
	"testing"
)

// TestDevRuntimeForAnAdapterWithoutCallbacks: for an http provider whose adapter has
// receipts: none, the dev runtime file gives it no callback verifier, so that the runtime file
// passes the checks serve runs (it used to be refused with runtime.invalid).
func TestDevRuntimeForAnAdapterWithoutCallbacks(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{edit: map[string]func(string) string{
		"providers/sms-gateway/provider.yaml": func(s string) string {
			return strings.Replace(s, "receipts: callback", "receipts: none", 1)
		},
	}})
	if a := e.stack.pkg.Providers[0].Adapter; e.stack.pkg.Providers[0].ID != "sms-gateway" || a.TakesCallbacks() {
		t.Fatalf("the edited package still takes callbacks for %s", e.stack.pkg.Providers[0].ID)
	}
	if v := e.stack.rt.Providers["sms-gateway"].HTTP.CallbackVerifier; v != nil {
		t.Fatalf("the dev runtime file gives sms-gateway a callback verifier %+v", v)
	}
	// The quickstart as it is keeps its verifier.
	if newAPIEnv(t, envOptions{}).stack.rt.Providers["sms-gateway"].HTTP.CallbackVerifier == nil {
		t.Fatal("the dev runtime file lost the verifier of an adapter that takes callbacks")
	}
}
