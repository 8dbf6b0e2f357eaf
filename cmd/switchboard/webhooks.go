package main

import (
	"switchboard/engine"
	"switchboard/engine/runtime"
	"switchboard/engine/webhooks"
	"switchboard/packages"
)

// webhookEndpoints are the runtime file's endpoints as the delivery worker takes them.
func webhookEndpoints(rt *runtime.Runtime) []webhooks.Endpoint {
	out := make([]webhooks.Endpoint, 0, len(rt.Webhooks))
	for _, w := range rt.Webhooks {
		out = append(out, webhooks.Endpoint{ID: w.ID, URL: w.URL.String(), Key: w.Key,
			AccessProfiles: w.AccessProfiles, Events: w.Events, Timeout: w.Timeout, Concurrency: w.Concurrency})
	}
	return out
}

// subscriptions are what the store writes outbox rows for; none without a package (a command
// that changes no message).
func subscriptions(rt *runtime.Runtime, pkg *packages.Package) []engine.Subscription {
	if pkg == nil || len(rt.Webhooks) == 0 {
		return nil
	}
	return webhooks.Subscriptions(pkg, webhookEndpoints(rt))
}
