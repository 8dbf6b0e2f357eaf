package runtime

import (
	"regexp"

	"switchboard/engine/pushkey"
)

// FirebaseMessagingScope is the OAuth 2.0 scope a google-service-account asks for when the
// runtime file names none: sending with Firebase Cloud Messaging's HTTP v1 API.
const FirebaseMessagingScope = "https://www.googleapis.com/auth/firebase.messaging"

// appleID is the form of an APNs key id and team id: ten letters and digits, as Apple issues.
var appleID = regexp.MustCompile(`^[A-Z0-9]{10}$`)

// decodeServiceAccount reads a google-service-account: the key must be a service account's
// JSON key with a client email, an RSA private key and a token_uri that is https (or http
// towards a loopback host). No member of the key is ever shown.
func (r *reader) decodeServiceAccount(m *mapping, a *HTTPAuth) {
	a.Scopes = scopes(m)
	if len(a.Scopes) == 0 {
		a.Scopes = []string{FirebaseMessagingScope}
	}
	s := m.secret("serviceAccountRef", true)
	if s.IsZero() {
		return
	}
	key, err := pushkey.CheckServiceAccount(s.value)
	if err != nil {
		m.fail("serviceAccountRef", "%v", err)
		return
	}
	if key.TokenURI != "" {
		if _, reason := parseRemoteURL(key.TokenURI); reason != "" {
			m.fail("serviceAccountRef", "the service account key's token_uri %s", reason)
			return
		}
	}
	a.ServiceAccount = s
}

// decodeAPNsToken reads an apns-token: the .p8 key, its key id and the team id.
func (r *reader) decodeAPNsToken(m *mapping, a *HTTPAuth) {
	for _, key := range []string{"keyId", "teamId"} {
		text := m.required(key)
		if text != "" && !appleID.MatchString(text) {
			m.fail(key, "must be ten upper-case letters and digits, as Apple's developer account shows it")
			continue
		}
		if key == "keyId" {
			a.KeyID = text
		} else {
			a.TeamID = text
		}
	}
	s := m.secret("keyRef", true)
	if s.IsZero() {
		return
	}
	if _, err := pushkey.ParseAPNsKey(s.value); err != nil {
		m.fail("keyRef", "the secret is %v", err)
		return
	}
	a.Key = s
}
