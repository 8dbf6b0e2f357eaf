package packages

// checkReferences checks what the entries of switchboard.yaml say about each other. A
// reference to an id that is declared but was refused for another reason is not reported
// again.
func checkReferences(mf *manifest) {
	providers := map[string]*Provider{}
	for _, d := range mf.providers {
		providers[d.v.ID] = d.v
	}
	for _, d := range mf.senderProfiles {
		checkSenderProfile(mf, providers, d)
	}

	templateIDs := mf.ids["templates"]
	senderProfiles := mf.ids["senderProfiles"]
	owner := map[string]string{}
	for _, d := range mf.accessProfiles {
		a := d.v
		for _, id := range a.SenderProfiles {
			if !senderProfiles[id] {
				d.m.errf("senderProfiles", "unknown sender profile %q", id)
			}
		}
		for _, id := range a.Templates {
			if !templateIDs[id] {
				d.m.errf("templates", "unknown template %q", id)
			}
		}
		for _, id := range a.InboxProviders {
			if !mf.ids["providers"][id] {
				d.m.errf("inboxProviders", "unknown provider %q", id)
			}
		}
		for _, c := range a.Clients {
			if other, taken := owner[c]; taken {
				d.m.errf("clients", "client %q already belongs to access profile %q; a client belongs to one profile", c, other)
				continue
			}
			owner[c] = a.ID
		}
	}
}

func checkSenderProfile(mf *manifest, providers map[string]*Provider, d decl[*SenderProfile]) {
	sp := d.v
	carries := func(key, id string) *Provider {
		p, ok := providers[id]
		switch {
		case ok && !p.CanCarry(sp.Channel):
			d.m.errf(key, "provider %q (%s) cannot carry %s messages%s", id, p.Kind, sp.Channel, carriedBy(sp.Channel))
			return nil
		case !ok && !mf.ids["providers"][id]:
			d.m.errf(key, "unknown provider %q", id)
		}
		return p
	}
	used := []*Provider{carries("provider", sp.Provider)}
	for _, f := range sp.FallbackProviders {
		used = append(used, carries("fallbackProviders", f))
	}
	if sp.OnUncertain != onUncertainRetry || sp.AcceptDuplicates {
		return
	}
	for _, p := range used {
		if p != nil && !p.IdempotentSubmit {
			d.m.errf("onUncertain", "retry sends a message that may have been sent again: provider %q must declare "+
				"idempotentSubmit, or the profile must set acceptDuplicates: true", p.ID)
		}
	}
}

// carriedBy names the provider kinds that can carry a channel, for a refusal.
func carriedBy(channel string) string {
	switch channel {
	case channelChat:
		return ": chat is carried by http providers only"
	case channelPush:
		return ": push is carried by http providers only"
	case channelEmail:
		return ": email is carried by smtp and http providers"
	case channelPeer:
		return ": peer messages are carried by peer and http providers"
	case channelSMS:
		return ": sms is carried by http providers"
	}
	return ""
}
