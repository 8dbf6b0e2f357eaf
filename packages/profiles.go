package packages

// parseSenderProfile decodes one senderProfiles entry and applies the defaults of docs/package.md, "Sender profiles".
// It returns nil when the entry is unusable (its problems are recorded).
func parseSenderProfile(m *ymap) *SenderProfile {
	ok := true
	p := &SenderProfile{}
	var good bool
	p.ID, good = identifier(m, "id")
	ok = ok && good
	p.Channel, good = oneOf(m, "channel", "", channelEmail, channelSMS, channelPeer, channelChat, channelPush)
	ok = ok && good
	p.Provider, good = identifier(m, "provider")
	ok = ok && good
	p.FallbackProviders = m.strList("fallbackProviders")
	for i, f := range p.FallbackProviders {
		if !validIdentifier(f) {
			m.errf("fallbackProviders", "entry %d: %q is not an identifier", i, f)
			ok = false
		} else if f == p.Provider {
			m.errf("fallbackProviders", "entry %d: %q is already the profile's provider", i, f)
			ok = false
		}
	}

	switch {
	case p.Channel == channelPeer && m.has("sender"):
		m.errf("sender", "peer sender profiles have no sender")
		ok = false
	case p.Channel == channelPush && m.has("sender"):
		// The app a notification comes from is the gateway's credential and parameters.
		m.errf("sender", "push sender profiles have no sender (the gateway's credential names the app)")
		ok = false
	case p.Channel == channelEmail || p.Channel == channelSMS:
		if !m.required("sender") {
			ok = false
			break
		}
		s, good := m.str("sender")
		if !good {
			ok = false
			break
		}
		if msg, valid := validSender(p.Channel, s); !valid {
			m.errf("sender", "%s", msg)
			ok = false
		}
		p.Sender = s
	case p.Channel == channelChat && m.has("sender"):
		// Optional for chat: most gateways post as the credential's bot; some take a name.
		s, good := m.str("sender")
		if !good {
			ok = false
			break
		}
		if msg, valid := validSender(p.Channel, s); !valid || s == "" {
			if msg == "" {
				msg = "must not be empty (leave it out instead)"
			}
			m.errf("sender", "%s", msg)
			ok = false
		}
		p.Sender = s
	}

	switch {
	case p.Channel == channelSMS:
		if !m.required("maximumSegments") {
			ok = false
			break
		}
		p.MaximumSegments, good = intIn(m, "maximumSegments", 0, minSegments, maxSegments)
		ok = ok && good
	case m.has("maximumSegments") && p.Channel != "":
		m.errf("maximumSegments", "only sms sender profiles have maximumSegments")
		ok = false
	}

	p.Retry, good = parseRetry(m)
	ok = ok && good
	p.OnUncertain, good = oneOf(m, "onUncertain", onUncertainHold, onUncertainHold, onUncertainRetry)
	ok = ok && good
	p.AcceptDuplicates, good = m.boolean("acceptDuplicates")
	ok = ok && (good || !m.has("acceptDuplicates"))
	p.DefaultExpirySeconds, good = intIn(m, "defaultExpirySeconds", defaultExpirySeconds, minExpirySeconds, maxExpirySeconds)
	ok = ok && good
	if !ok {
		return nil
	}
	return p
}

// parseRetry decodes retry: all three members when it is given, the defaults otherwise.
func parseRetry(m *ymap) (RetryPolicy, bool) {
	def := RetryPolicy{
		MaximumAttempts:     defaultMaximumAttempts,
		InitialDelaySeconds: defaultInitialDelaySeconds,
		MaximumDelaySeconds: defaultMaximumDelaySeconds,
	}
	if !m.has("retry") {
		return def, true
	}
	r := m.y.mapping(m.values["retry"], m.sub("retry"), "maximumAttempts", "initialDelaySeconds", "maximumDelaySeconds")
	if r == nil {
		return def, false
	}
	ok := r.required("maximumAttempts")
	ok = r.required("initialDelaySeconds") && ok
	ok = r.required("maximumDelaySeconds") && ok
	if !ok {
		return def, false
	}
	var p RetryPolicy
	var a, b, c bool
	p.MaximumAttempts, a = intIn(r, "maximumAttempts", 0, 1, maxMaximumAttempts)
	p.InitialDelaySeconds, b = intIn(r, "initialDelaySeconds", 0, 1, maxDelaySeconds)
	if !b {
		return def, false
	}
	p.MaximumDelaySeconds, c = intIn(r, "maximumDelaySeconds", 0, p.InitialDelaySeconds, maxDelaySeconds)
	return p, a && c
}

// parseAccessProfile decodes one accessProfiles entry and checks its role rules.
func parseAccessProfile(m *ymap) *AccessProfile {
	ok := true
	p := &AccessProfile{}
	var good bool
	p.ID, good = identifier(m, "id")
	ok = ok && good
	p.Role, good = oneOf(m, "role", "", roleSender, roleOperator, roleReceiver)
	ok = ok && good

	if m.required("clients") {
		p.Clients = m.strList("clients")
		if len(p.Clients) == 0 {
			m.errf("clients", "at least one client is required")
			ok = false
		}
	} else {
		ok = false
	}
	for _, c := range p.Clients {
		if !tokenPattern.MatchString(c) {
			m.errf("clients", "%q is not a client id (printable ASCII without spaces, quotes or backslashes)", c)
			ok = false
		}
	}
	p.RequiredScopes = m.strList("requiredScopes")
	for _, s := range p.RequiredScopes {
		if !tokenPattern.MatchString(s) {
			m.errf("requiredScopes", "%q is not a scope token", s)
			ok = false
		}
	}
	p.SenderProfiles = m.strList("senderProfiles")
	p.Templates = m.strList("templates")
	if m.has("inboxProviders") {
		p.InboxProviders = m.strList("inboxProviders")
		if p.InboxProviders == nil {
			p.InboxProviders = []string{}
		}
		if p.Role != roleReceiver {
			m.errf("inboxProviders", "only the receiver role reads the inbox by provider")
			ok = false
		}
	}
	p.AllowDirectContent, good = m.boolean("allowDirectContent")
	ok = ok && (good || !m.has("allowDirectContent"))
	p.DeviceTokenInEvents, good = m.boolean("deviceTokenInEvents")
	ok = ok && (good || !m.has("deviceTokenInEvents"))

	switch p.Role {
	case roleSender:
		if len(p.SenderProfiles) == 0 {
			m.errf("senderProfiles", "the sender role needs at least one sender profile")
			ok = false
		}
		if len(p.Templates) == 0 {
			m.errf("templates", "the sender role needs at least one template")
			ok = false
		}
	case roleOperator, roleReceiver:
		if len(p.SenderProfiles) > 0 {
			m.errf("senderProfiles", "the %s role takes no sender profiles", p.Role)
			ok = false
		}
		if len(p.Templates) > 0 {
			m.errf("templates", "the %s role takes no templates", p.Role)
			ok = false
		}
		if p.AllowDirectContent {
			m.errf("allowDirectContent", "the %s role cannot send direct content", p.Role)
			ok = false
		}
		if p.DeviceTokenInEvents {
			m.errf("deviceTokenInEvents", "the %s role sends no messages, so it has no device tokens", p.Role)
			ok = false
		}
	}

	p.RequestsPerMinute, good = positive(m, "requestsPerMinute", true)
	ok = ok && good
	p.Burst, good = positive(m, "burst", true)
	ok = ok && good
	p.DailyLimit, good = positive(m, "dailyLimit", false)
	ok = ok && good
	if !ok {
		return nil
	}
	return p
}

func positive(m *ymap, key string, required bool) (int, bool) {
	if !m.has(key) {
		if required {
			m.errf(key, "is required")
			return 0, false
		}
		return 0, true
	}
	v, ok := m.integer(key)
	if ok && v < 1 {
		m.errf(key, "must be a positive integer")
		return 0, false
	}
	return v, ok
}
