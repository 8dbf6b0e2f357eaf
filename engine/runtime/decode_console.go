package runtime

// Console turns on the operator console at /console/ on the API listener (docs/console.md).
type Console struct {
	// Enabled serves the console; false (the default) answers 404 under /console/.
	Enabled bool
	// ClientID is the OAuth public client the console signs in as, with authorization code and
	// PKCE. CheckPackage requires a client of an operator access profile.
	ClientID string
}

// decodeConsole reads `console: {enabled, clientId}`; clientId is required once enabled.
func (r *reader) decodeConsole(doc *mapping) Console {
	if !doc.has("console") {
		return Console{}
	}
	m := doc.child("console", "enabled", "clientId")
	c := Console{Enabled: m.boolean("enabled", false), ClientID: m.str("clientId")}
	if c.Enabled && c.ClientID == "" {
		m.required("clientId")
	}
	return c
}
