package webhooks

import (
	"slices"
	"time"

	"switchboard/engine"
	"switchboard/packages"
)

// Endpoint timeouts and concurrency.
const (
	DefaultTimeout     = 5 * time.Second
	MinTimeout         = time.Second
	MaxTimeout         = 30 * time.Second
	DefaultConcurrency = 16
	MaxConcurrency     = 256
)

// Endpoint is one receiver of events, as the runtime file's webhooks member declares it.
type Endpoint struct {
	ID  string
	URL string // https, or http towards a loopback host
	// Key is the HMAC key (the decoded whsec_ secret).
	Key []byte
	// AccessProfiles: the endpoint gets the events of messages submitted under these profiles,
	// and of inbox entries these profiles may read.
	AccessProfiles []string
	// Events are the types it takes; nil means every type.
	Events []string
	// Timeout bounds one delivery (connection, request and answer); 0 means DefaultTimeout.
	Timeout time.Duration
	// Concurrency is how many deliveries to this endpoint run at once; 0 means
	// DefaultConcurrency.
	Concurrency int
}

// takes reports whether the endpoint takes events of type t.
func (e *Endpoint) takes(t string) bool { return e.Events == nil || slices.Contains(e.Events, t) }

// Subscriptions says, for each endpoint, what the store writes outbox rows for: message.status
// and device.unregistered events of the messages of its access profiles, and inbox.received
// events of the entries its profiles may read: every entry for an operator profile, the entries of the receiver profiles'
// inboxProviders otherwise (every provider when one of them lists none). Sender profiles read
// no inbox.
func Subscriptions(pkg *packages.Package, endpoints []Endpoint) []engine.Subscription {
	out := make([]engine.Subscription, 0, len(endpoints))
	for i := range endpoints {
		e := &endpoints[i]
		sub := engine.Subscription{Endpoint: e.ID}
		if e.takes(engine.EventMessageStatus) {
			sub.MessageProfiles = slices.Clone(e.AccessProfiles)
		}
		if e.takes(engine.EventInboxReceived) {
			sub.Inbox, sub.InboxProviders = inboxReach(pkg, e.AccessProfiles)
		}
		if e.takes(engine.EventDeviceUnregistered) {
			sub.DeviceProfiles = slices.Clone(e.AccessProfiles)
		}
		out = append(out, sub)
	}
	return out
}

// inboxReach is which inbox entries the profiles may read: (false, nil) none, (true, nil)
// every one, (true, providers) those of the providers.
func inboxReach(pkg *packages.Package, profiles []string) (bool, []string) {
	reads, all := false, false
	var providers []string
	for _, id := range profiles {
		ap := pkg.AccessProfile(id)
		switch {
		case ap == nil:
		case ap.Role == "operator":
			reads, all = true, true
		case ap.Role == "receiver":
			reads = true
			if ap.InboxProviders == nil {
				all = true
			}
			providers = append(providers, ap.InboxProviders...)
		}
	}
	if !reads || all {
		return reads, nil
	}
	slices.Sort(providers)
	return true, slices.Compact(providers)
}
