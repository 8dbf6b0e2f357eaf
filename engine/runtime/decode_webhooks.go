package runtime

import (
	"net/url"
	"time"

	"switchboard/engine"
)

// Webhook is one endpoint of the runtime file's webhooks member (docs/webhooks.md).
type Webhook struct {
	ID string
	// URL is https, or http towards a loopback host; without user information or fragment.
	URL *url.URL
	// Secret is the whsec_ secret; Key its decoded HMAC key.
	Secret Secret
	Key    []byte
	// AccessProfiles are package access profiles (CheckPackage checks them); never empty.
	AccessProfiles []string
	// Events are the event types taken; nil means every type.
	Events []string
	// Timeout bounds one delivery: timeoutMilliseconds, 1000 to 30000, default 5000.
	Timeout time.Duration
	// Concurrency is how many deliveries run at once: concurrency, 1 to 256, default 16.
	Concurrency int
}

// webhookKeys are the members of one endpoint.
var webhookKeys = []string{"url", "secretRef", "accessProfiles", "events", "timeoutMilliseconds", "concurrency"}

// decodeWebhooks reads `webhooks`, a mapping from endpoint id to endpoint, in file order.
func (r *reader) decodeWebhooks(doc *mapping) []Webhook {
	mem, line := doc.at("webhooks")
	m := r.open(doc.vals["webhooks"], mem, line, nil)
	var out []Webhook
	for _, id := range m.keys {
		wmem, wline := m.at(id)
		if !isIdentifier(id) {
			r.diags.add(CodeInvalid, wline, wmem, "endpoint ids are 1 to 64 characters of a-z, 0-9 and -, not starting or ending with -")
			continue
		}
		w := m.child(id, webhookKeys...)
		h := Webhook{ID: id,
			Timeout:     millis(w.integer("timeoutMilliseconds", 5000, 1000, 30000)),
			Concurrency: int(w.integer("concurrency", 16, 1, 256)),
		}
		if text := w.required("url"); text != "" {
			u, reason := parseRemoteURL(text)
			if reason != "" {
				w.fail("url", "%s", reason)
			}
			h.URL = u
		}
		h.Secret = r.textSecret(w, "secretRef")
		if !h.Secret.IsZero() {
			key, ok := decodeWebhookSecret(h.Secret.value)
			if !ok {
				w.fail("secretRef", "the secret must be whsec_ followed by standard base64")
				h.Secret = Secret{}
			}
			h.Key = key
		}
		if !w.has("accessProfiles") {
			w.fail("accessProfiles", "is required: the access profiles whose events the endpoint gets")
		} else if h.AccessProfiles = w.strings("accessProfiles"); len(h.AccessProfiles) == 0 {
			w.fail("accessProfiles", "must list at least one access profile")
		}
		if w.has("events") {
			h.Events = w.strings("events")
			seen := map[string]bool{}
			for _, e := range h.Events {
				switch {
				case !engine.IsEventType(e):
					w.fail("events", "%q is not an event type (message.status, inbox.received, device.unregistered)", e)
				case seen[e]:
					w.fail("events", "lists %s twice", e)
				}
				seen[e] = true
			}
			if len(h.Events) == 0 {
				w.fail("events", "must list at least one event type; leave it out for every type")
			}
		}
		out = append(out, h)
	}
	return out
}
